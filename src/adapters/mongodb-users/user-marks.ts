/**
 * Holdfast's mark on a MongoDB user, naming the provider that made it: a user is changed or
 * dropped only by its own provider; one with another provider's mark never, one without a
 * mark only when the provider adopts (it is then marked). Where the mark is kept depends on
 * the server: see custom-data-marks.ts (a mongod) and collection-marks.ts (FerretDB).
 */
import type { Db, Document } from 'mongodb';

/** A user as `usersInfo` shows it: the fields a mark is read from. */
export interface ListedUser {
  user: string;
  db: string;
  /** The server's id of this user (a UUID): a user dropped and made again by hand has another. */
  userId?: unknown;
  customData?: Document;
}

/** Whose mark a user carries. `pending`: made by `provider`, its mark not yet bound to the user's id. */
export interface UserOwner {
  provider: string;
  pending: boolean;
}

/** The key of a user in maps and marks: `<db>.<user>`, as MongoDB's own `_id`. */
export const userKey = (db: string, user: string): string => `${db}.${user}`;

export interface UserMarks {
  /** The mark each user carries, by {@link userKey}; a user without one is absent. */
  owners(users: readonly ListedUser[]): Promise<Map<string, UserOwner>>;
  /**
   * Runs `createUser` (`command`, without the mark) in `db` so that the user exists only as this
   * provider's. Throws the server's error as it is (a user of that name may exist by now).
   */
  createMarked(db: Db, command: Document): Promise<void>;
  /** Marks an existing user as this provider's: when adopted, or to bind a pending mark. */
  mark(db: Db, user: ListedUser): Promise<void>;
  /** After the user was dropped (or found absent): this provider's mark of it goes too. */
  forget(db: string, login: string): Promise<void>;
}
