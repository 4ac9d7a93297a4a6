/**
 * A Redis server's own command table, as its ACL rules are evaluated against it: every command
 * and subcommand with its ACL categories, read with `COMMAND` (each entry lists its subcommands)
 * and `ACL CAT` (the categories a rule may name). Read once per admin connection: a restarted
 * server is a new connection, and a new table (another version may have other commands).
 */
/** One command or subcommand (`config|get`) of the table. */
export interface CommandEntry {
  /** Lowercase; a subcommand's is `parent|sub`. */
  readonly name: string;
  /** Without their `@`. */
  readonly categories: ReadonlySet<string>;
  /** `no_auth`: Redis lets every user run it (`AUTH`, `HELLO`), whatever its rules. */
  readonly noAuth: boolean;
  /** A module's command: category rules pass it by. */
  readonly module: boolean;
  readonly arity: number;
  readonly subcommands: readonly CommandEntry[];
  /** Whether it is a subcommand. */
  readonly child: boolean;
}

/** What a command table is asked with, in one round trip: the commands, then the categories. */
export const COMMAND_TABLE_QUERY: ReadonlyArray<readonly [string, ...string[]]> = [['COMMAND'], ['ACL', 'CAT']];

export class CommandTable {
  /** Every command and subcommand by its lowercase name (`get`, `config|get`). */
  private readonly byName = new Map<string, CommandEntry>();

  constructor(
    /** The top-level commands. */
    readonly commands: readonly CommandEntry[],
    /** Every category a rule may name, without its `@`. */
    readonly categories: ReadonlySet<string>,
  ) {
    for (const command of commands) {
      this.byName.set(command.name, command);
      for (const sub of command.subcommands) this.byName.set(sub.name, sub);
    }
  }

  /** A command (`get`) or subcommand (`config|get`), as Redis looks a rule's name up (case-insensitive). */
  lookup(name: string): CommandEntry | undefined {
    return this.byName.get(name.toLowerCase());
  }

  /** What a user can run: commands without subcommands, and subcommands (a container alone is no call). */
  callable(): CommandEntry[] {
    return this.commands.flatMap((c) => (c.subcommands.length > 0 ? [...c.subcommands] : [c]));
  }

  /** Every entry, containers included. */
  all(): CommandEntry[] {
    return [...this.byName.values()];
  }
}

const text = (value: unknown): string => (Buffer.isBuffer(value) ? value.toString('utf8') : String(value));
const list = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);

/** One entry of a `COMMAND` reply: name, arity, flags, first key, last key, step, ACL categories, tips, key specs, subcommands. */
function entryOf(reply: unknown, child: boolean): CommandEntry {
  const fields = list(reply);
  const flags = new Set(list(fields[2]).map((f) => text(f).toLowerCase()));
  if (fields.length < 7 || typeof fields[0] === 'object') {
    throw new TypeError('COMMAND answered with an entry that is not a command');
  }
  return {
    name: text(fields[0]).toLowerCase(),
    arity: Number(fields[1]),
    categories: new Set(list(fields[6]).map((c) => text(c).replace(/^@/, '').toLowerCase())),
    noAuth: flags.has('no_auth'),
    module: flags.has('module'),
    subcommands: child ? [] : list(fields[9]).map((s) => entryOf(s, true)),
    child,
  };
}

/** The table from the replies of {@link COMMAND_TABLE_QUERY}. */
export function parseCommandTable(commandReply: unknown, categoriesReply: unknown): CommandTable {
  if (!Array.isArray(commandReply) || !Array.isArray(categoriesReply)) {
    throw new TypeError('COMMAND or ACL CAT answered with something that is not a list');
  }
  return new CommandTable(
    commandReply.map((entry) => entryOf(entry, false)),
    new Set(categoriesReply.map((c) => text(c).toLowerCase())),
  );
}
