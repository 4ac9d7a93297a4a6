/**
 * The mark where the server keeps no `customData` (FerretDB v1.24 refuses any that is not
 * empty): one document per user in `admin.holdfast.marks`, `_id` `<db>.<user>`, naming the
 * provider and bound to the user's server id (`userId`), so that a user dropped and made again
 * by hand is not holdfast's. A create claims the name first (a pending mark, unique by `_id`,
 * so two providers never both create it), then creates the user, then binds the mark to it: a
 * worker killed in between leaves a pending mark its next apply finishes.
 */
import { Binary, MongoServerError, type Collection, type Db, type Document, type MongoClient } from 'mongodb';
import { HoldfastError } from '../../errors/holdfast-error.js';
import { userKey, type ListedUser, type UserMarks, type UserOwner } from './user-marks.js';

export const MARKS_DATABASE = 'admin';
export const MARKS_COLLECTION = 'holdfast.marks';

const DUPLICATE_KEY = 11000;

interface MarkDocument {
  _id: string;
  db: string;
  user: string;
  provider: string;
  /** The user's server id, or null while its create is under way. */
  userId: string | null;
}

/** The server's id of a user as text, or null when it has none. */
function idText(id: unknown): string | null {
  if (id === undefined || id === null) return null;
  if (typeof id === 'string') return id;
  if (id instanceof Binary) return id.toString('hex');
  return JSON.stringify(id);
}

export class CollectionMarks implements UserMarks {
  constructor(
    private readonly client: MongoClient,
    private readonly provider: string,
  ) {}

  async owners(users: readonly ListedUser[]): Promise<Map<string, UserOwner>> {
    const owners = new Map<string, UserOwner>();
    if (users.length === 0) return owners;
    const byKey = new Map(users.map((u) => [userKey(u.db, u.user), u]));
    for (const mark of await this.marks()
      .find({ _id: { $in: [...byKey.keys()] } })
      .toArray()) {
      const user = byKey.get(mark._id);
      // a mark bound to another id is stale: its user was dropped, this one made by someone else
      if (user && (mark.userId === null || mark.userId === idText(user.userId)))
        owners.set(mark._id, { provider: mark.provider, pending: mark.userId === null });
    }
    return owners;
  }

  async createMarked(db: Db, command: Document): Promise<void> {
    const login = String(command.createUser);
    const key = userKey(db.databaseName, login);
    await this.claim(db, login);
    try {
      await db.command(command);
    } catch (error) {
      await this.marks()
        .deleteOne({ _id: key, provider: this.provider, userId: null })
        .catch(() => undefined);
      throw error;
    }
    const user = await this.userOf(db, login);
    if (user)
      await this.marks().updateOne({ _id: key, provider: this.provider }, { $set: { userId: idText(user.userId) } });
  }

  async mark(_db: Db, user: ListedUser): Promise<void> {
    const key = userKey(user.db, user.user);
    await this.marks().replaceOne(
      { _id: key },
      { db: user.db, user: user.user, provider: this.provider, userId: idText(user.userId) },
      { upsert: true },
    );
  }

  async forget(db: string, login: string): Promise<void> {
    await this.marks().deleteOne({ _id: userKey(db, login), provider: this.provider });
  }

  /**
   * Claims `<db>.<login>` (whose user the caller found absent) with a pending mark. A mark of
   * this provider's is made pending again; another provider's is replaced only when its user is
   * gone still (stale), else it is that provider's user, made or being made: refused.
   */
  private async claim(database: Db, login: string): Promise<void> {
    const db = database.databaseName;
    const key = userKey(db, login);
    const pending: MarkDocument = { _id: key, db, user: login, provider: this.provider, userId: null };
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        await this.marks().insertOne(pending);
        return;
      } catch (error) {
        if (!(error instanceof MongoServerError && error.code === DUPLICATE_KEY)) throw error;
      }
      const found = await this.marks().findOne({ _id: key });
      if (found?.provider === this.provider) {
        await this.marks().updateOne({ _id: key, provider: this.provider }, { $set: { userId: null } });
        return;
      }
      // asked again now: the caller's look may be older than the other provider's create
      if (found && (found.userId === null || (await this.userOf(database, login)) !== undefined)) {
        throw new HoldfastError(
          'BACKEND_REFUSED',
          `mongodb-users: user "${login}" in database "${db}" is made by provider "${found.provider}" (its mark in ${MARKS_DATABASE}.${MARKS_COLLECTION}); provider "${this.provider}" does not make it (give this consumer another login)`,
        );
      }
      if (found) await this.marks().deleteOne({ _id: key, userId: found.userId });
    }
    throw new HoldfastError(
      'BACKEND_ERROR',
      `mongodb-users: the mark of user "${login}" in database "${db}" kept changing while it was claimed; tried again later`,
    );
  }

  private async userOf(db: Db, login: string): Promise<ListedUser | undefined> {
    const reply = await db.command({ usersInfo: { user: login, db: db.databaseName } });
    return ((reply.users as ListedUser[] | undefined) ?? [])[0];
  }

  private marks(): Collection<MarkDocument> {
    return this.client.db(MARKS_DATABASE).collection<MarkDocument>(MARKS_COLLECTION);
  }
}
