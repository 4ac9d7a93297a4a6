/**
 * The mark on a mongod: `customData.holdfast.provider`, written by the `createUser` that makes
 * the user (so it never exists unmarked) and kept by the server with the user: dropping the
 * user drops the mark. Other `customData` keys are kept when a user is adopted.
 */
import type { Db, Document } from 'mongodb';
import type { ListedUser, UserMarks, UserOwner } from './user-marks.js';
import { userKey } from './user-marks.js';

/** The `customData` key holdfast writes (no `.`, no leading `$`: MongoDB refuses those). */
export const CUSTOM_DATA_KEY = 'holdfast';

export class CustomDataMarks implements UserMarks {
  constructor(private readonly provider: string) {}

  owners(users: readonly ListedUser[]): Promise<Map<string, UserOwner>> {
    const owners = new Map<string, UserOwner>();
    for (const u of users) {
      const mark = (u.customData?.[CUSTOM_DATA_KEY] as { provider?: unknown } | undefined)?.provider;
      if (typeof mark === 'string') owners.set(userKey(u.db, u.user), { provider: mark, pending: false });
    }
    return Promise.resolve(owners);
  }

  async createMarked(db: Db, command: Document): Promise<void> {
    await db.command({ ...command, customData: this.customData({}) });
  }

  async mark(db: Db, user: ListedUser): Promise<void> {
    await db.command({ updateUser: user.user, customData: this.customData(user.customData ?? {}) });
  }

  forget(): Promise<void> {
    return Promise.resolve(); // the mark went with the user
  }

  private customData(kept: Document): Document {
    return { ...kept, [CUSTOM_DATA_KEY]: { provider: this.provider } };
  }
}
