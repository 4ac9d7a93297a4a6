/**
 * Every timing setting, declared once: the key a configuration file gives it (under `defaults:`
 * or a provider, which wins), the field it resolves to, its default, its schema, the bound it
 * keeps to another setting, and what it means. The {@link Timing} type, {@link DEFAULT_TIMING},
 * the configuration's schema and the bounds checked all derive from {@link TIMING_SETTINGS}: a
 * new setting is one entry, and a row of docs/configuration.md's Timing table, which `option-rows.ts`
 * renders from it (a test compares the page with it).
 */
import { z } from 'zod';
import type { ConsumerTiming } from '../../machines/delays.js';
import { durationSchema } from './duration.js';

interface Setting {
  /** Its key in the configuration file. */
  key: string;
  /** Validates and converts what the file says (a duration to milliseconds). */
  schema: z.ZodType<number, unknown>;
  /** Its value when neither the provider nor `defaults:` gives it; undefined: off. */
  default: number | undefined;
  /** Another setting's key this one may not be less (`atLeast`) or more (`atMost`) than. */
  atLeast?: string;
  atMost?: string;
  /** What it means, as docs/configuration.md's Timing row says it after its bound (markdown; a test compares them). */
  doc: string;
}

const jitterSchema = z.number().min(0, 'must be at least 0').lt(1, 'must be less than 1');
const shareSchema = z.number().min(0, 'must be at least 0').max(1, 'must be at most 1');

/** The timing settings, by the field each resolves to. */
export const TIMING_SETTINGS = {
  verifyEveryMs: {
    key: 'verifyEvery',
    schema: durationSchema,
    default: 60_000,
    doc: 'each applied consumer is asked this often, jittered',
  },
  checkTimeoutMs: {
    key: 'checkTimeout',
    schema: durationSchema,
    default: 30_000,
    atMost: 'verifyEvery',
    doc: "a check or an apply that takes longer counts as could-not-ask (and pauses the provider's other checks until a probe gets an answer)",
  },
  brakeMaxMs: {
    key: 'brakeMax',
    schema: durationSchema,
    default: 3_600_000,
    atLeast: 'verifyEvery',
    doc: "the brake's doubling intervals stop growing here",
  },
  retryBaseMs: {
    key: 'retryBase',
    schema: durationSchema,
    default: 1_000,
    doc: 'first retry of a failed apply or remove; doubles, never beyond `verifyEvery`',
  },
  jitter: {
    key: 'jitter',
    schema: jitterSchema,
    default: 0.1,
    doc: 'fraction of `verifyEvery` by which checks are spread, in [0, 1)',
  },
  secretGraceMs: {
    key: 'secretGrace',
    schema: durationSchema,
    default: 60_000,
    doc: 'a missing grant secret is a quiet wait this long, then a warning',
  },
  deepCheckEveryMs: {
    key: 'deepCheckEvery',
    schema: durationSchema,
    default: 3_600_000,
    atLeast: 'verifyEvery',
    doc: 'a deep check (rules compared) at least this often, whatever `deepCheckBudget` allows; light ones between',
  },
  deepCheckBudget: {
    key: 'deepCheckBudget',
    schema: shareSchema,
    default: 0.01,
    // each consumer's deep check comes every (consumers × the adapter's deep-check cost) / deepCheckBudget, between
    // verifyEvery and deepCheckEvery (0: every deepCheckEvery): deep-check-interval.ts, and the page's paragraph below
    doc: "share of one core of the backend's CPU deep checks may use, in [0, 1] (below)",
  },
  quarantineAfterMs: {
    key: 'quarantineAfter',
    schema: durationSchema,
    default: undefined,
    doc: 'rules still differing after braking at `brakeMax` this long: quarantined, not applied until someone acts',
  },
  contestedWindowMs: {
    key: 'contestedWindow',
    schema: durationSchema,
    default: 3_600_000,
    atLeast: 'verifyEvery',
    // see src/queue/contest.ts
    doc: 'a consumer healed 3 times within this long (found changed after holdfast put it back) is contested: said once, counted, shown; it stays so until this long passes without such a heal',
  },
} as const satisfies Record<string, Setting>;

type Settings = typeof TIMING_SETTINGS;
type Field = keyof Settings;
type Defaulted = { [F in Field]: Settings[F]['default'] extends number ? F : never }[Field];
type Optional = Exclude<Field, Defaulted>;

type FromTable = { [F in Defaulted]: number } & { [F in Optional]?: number | undefined };

/**
 * Per-provider timing, in milliseconds (see {@link TIMING_SETTINGS} for each field): the machine's (`ConsumerTiming`,
 * which it must agree with) and the effects'.
 */
export interface Timing extends ConsumerTiming, FromTable {}

/** A timing setting's key in the configuration file. */
export type TimingKey = Settings[Field]['key'];

/** Every setting as `[field, setting]`, in the table's order. */
export const TIMING_ENTRIES = Object.entries(TIMING_SETTINGS) as Array<[Field, Setting & { key: TimingKey }]>;

/** Timing when neither the provider nor `defaults` says otherwise. */
export const DEFAULT_TIMING: Readonly<Timing> = (() => {
  const defaults = {} as Record<Field, number | undefined>;
  for (const [field] of TIMING_ENTRIES) defaults[field] = TIMING_SETTINGS[field].default;
  return defaults as { [F in Field]: Settings[F]['default'] };
})();

/** The timing settings as options of the file (on a provider or under `defaults:`), each optional. */
export const TIMING_OPTIONS = Object.fromEntries(
  TIMING_ENTRIES.map(([, setting]) => [setting.key, { schema: () => setting.schema.optional(), doc: setting.doc }]),
) as {
  [F in Field as Settings[F]['key']]: { schema: () => z.ZodOptional<Settings[F]['schema']>; doc: string };
};
