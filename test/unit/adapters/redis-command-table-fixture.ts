/**
 * A small Redis 7.0 command table for unit tests, as `COMMAND` and `ACL CAT` would give it: a
 * few commands and containers with the categories and flags Redis 7.0.15 gives them.
 */
import { parseCommandTable, type CommandTable } from '../../../src/adapters/redis-acl/command-table.js';

type Entry = [name: string, arity: number, flags: string[], categories: string[], subcommands?: Entry[]];

const ENTRIES: Entry[] = [
  ['get', 2, ['readonly', 'fast'], ['@read', '@string', '@fast']],
  ['set', -3, ['write'], ['@write', '@string', '@slow']],
  ['flushdb', -1, ['write'], ['@keyspace', '@write', '@slow', '@dangerous']],
  ['keys', 2, ['readonly'], ['@keyspace', '@read', '@slow', '@dangerous']],
  ['select', 2, ['loading', 'fast'], ['@fast', '@connection']],
  ['ping', -1, ['fast'], ['@fast', '@connection']],
  ['auth', -2, ['noscript', 'no_auth', 'fast'], ['@fast', '@connection']],
  ['publish', 3, ['pubsub', 'fast'], ['@pubsub', '@fast']],
  [
    'config',
    -2,
    [],
    ['@slow'],
    [
      ['config|get', -3, ['admin'], ['@admin', '@slow', '@dangerous']],
      ['config|set', -4, ['admin'], ['@admin', '@slow', '@dangerous']],
      ['config|help', 2, ['loading'], ['@slow']],
    ],
  ],
  [
    'client',
    -2,
    [],
    ['@slow'],
    [
      ['client|tracking', -3, ['noscript'], ['@slow', '@connection']],
      ['client|list', -2, ['admin'], ['@admin', '@slow', '@dangerous', '@connection']],
      ['client|id', 2, ['noscript'], ['@slow', '@connection']],
    ],
  ],
  [
    'pubsub',
    -2,
    [],
    ['@slow'],
    [
      ['pubsub|numpat', 2, ['pubsub'], ['@pubsub', '@slow']],
      ['pubsub|channels', -2, ['pubsub'], ['@pubsub', '@slow']],
    ],
  ],
  [
    'function',
    -2,
    [],
    ['@slow'],
    [
      ['function|flush', -2, ['write', 'noscript'], ['@write', '@slow', '@scripting']],
      ['function|list', -2, ['noscript'], ['@slow', '@scripting']],
    ],
  ],
  ['modcmd', 1, ['module'], ['@read']],
];

const CATEGORIES = ['keyspace', 'read', 'write', 'string', 'fast', 'slow', 'dangerous', 'connection', 'admin'];

function reply([name, arity, flags, categories, subcommands = []]: Entry): unknown[] {
  return [name, arity, flags, 0, 0, 0, categories, [], [], subcommands.map(reply)];
}

/** The table, parsed as the adapter parses a server's reply. */
export function smallTable(): CommandTable {
  return parseCommandTable(ENTRIES.map(reply), [...CATEGORIES, 'pubsub', 'scripting']);
}
