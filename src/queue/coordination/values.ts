/**
 * The values holdfast keeps in the queue's Redis, and their checked codecs. Anyone who reaches
 * that Redis can write anything there; a value that does not decode is treated as absent (the
 * next write replaces it), never trusted and never a crash.
 */
import { z } from 'zod';
import type { LastCheck } from '../../store/consumer-record.js';
import { STATE_MEANINGS } from '../../../machines/consumer-health.js';
import type { ConsumerStateName } from '../../../machines/consumer-machine.js';
import { currentStateOf } from '../../../machines/former-states.js';
import { CHECK_OUTCOMES } from '../consumer-brief.js';
import { TIMELINE_KINDS, type TimelineEvent } from '../timeline-event.js';
import { NODE_NAME_BYTES, TRANSITION_CAUSES } from '../../store/transition-cause.js';

/** What a consumer's checks learned, kept between checks without touching the store. */
export interface CheckMemo {
  /** When the last check ended (ms since the epoch). */
  at: number;
  outcome: LastCheck['outcome'];
  detail: string | null;
  /** The record revision the check ran at. */
  rev: number;
  /** When the last deep check ended (ms since the epoch), or null when there was none. */
  deepAt: number | null;
}

/** Why and since when a provider's checks are paused (or the record store is out). */
export interface Pause {
  since: string;
  reason: string;
}

/** Logins on a provider's backend under its orphan prefix that no consumer claims. */
export interface OrphanReport {
  at: string;
  prefix: string;
  logins: string[];
}

/** One node of a provider's backend of several, as a worker last saw it. */
export interface NoteNode {
  address: string;
  role: 'master' | 'replica' | 'node';
  answering: boolean;
  /** Since when it does not answer (ISO), and why, when it does not. */
  since?: string | undefined;
  why?: string | undefined;
  /** How many consumers it lacks, as the worker's checks and applies found them (absent: none), and why. */
  missing?: number | undefined;
  missingWhy?: string | undefined;
  /** Which worker found it lacking them, and when (ISO): several workers each count the consumers they checked. */
  missingBy?: string | undefined;
  missingAt?: string | undefined;
}

/** A provider's backend nodes as a worker last saw them (kept a few seconds: a worker that stops leaves none). */
export interface NodesNote {
  at: string;
  nodes: NoteNode[];
  /** The worker that noted it (a short id of its process). */
  by?: string | undefined;
}

/** At most this many nodes are noted per provider (a Redis Cluster of 64 nodes and their replicas fits). */
export const NODES_NOTED = 256;
/** A noted node's `why` and `missingWhy`, in characters at most (cut when noted: a longer one would not decode). */
export const NODE_WHY_CHARS = 500;
/** A noted node's count of missing consumers, at most. */
export const NODE_MISSING_MAX = 10_000_000;

/** A worker's id as noted. */
const workerId = z.string().regex(/^[\w-]{1,64}$/);

/** A node address as noted: printable, no spaces, bounded (the queue's Redis is written by others too). */
const noteAddress = z.string().regex(/^[\x21-\x7e]{1,300}$/);

export const nodesNoteCodec: z.ZodType<NodesNote> = z.object({
  at: z.string().max(40),
  nodes: z
    .array(
      z.object({
        address: noteAddress,
        role: z.enum(['master', 'replica', 'node']),
        answering: z.boolean(),
        since: z.string().max(40).optional(),
        why: z.string().max(NODE_WHY_CHARS).optional(),
        missing: z.number().int().min(0).max(NODE_MISSING_MAX).optional(),
        missingWhy: z.string().max(NODE_WHY_CHARS).optional(),
        missingBy: workerId.optional(),
        missingAt: z.string().max(40).optional(),
      }),
    )
    .max(NODES_NOTED),
  by: workerId.optional(),
});

/**
 * A memo written before the revision was named `rev` names it `epoch` (each check writes its memo anew: gone after one
 * check).
 */
const formerMemo = (value: unknown): unknown =>
  typeof value === 'object' && value !== null && 'epoch' in value && !('rev' in value)
    ? { ...value, rev: value.epoch }
    : value;

export const checkMemoCodec: z.ZodType<CheckMemo> = z.preprocess(
  formerMemo,
  z.object({
    at: z.number(),
    outcome: z.enum(CHECK_OUTCOMES),
    detail: z.string().nullable(),
    rev: z.number().int(),
    deepAt: z.number().nullable(),
  }),
);

export const pauseCodec: z.ZodType<Pause> = z.object({ since: z.string(), reason: z.string() });

/**
 * Why a node's consumers were made suspect: the kinds of an incarnation change (`src/adapters/incarnation.ts`), or
 * `loss-wave`: the provider showed a wave of logins found `missing` (the rule `src/queue/contest.ts` keeps).
 */
export const SUSPECT_WHYS = [
  'new-system-id',
  'new-run-id',
  'promoted',
  'answers-again',
  'joined',
  'loss-wave',
] as const;

export type SuspectWhy = (typeof SUSPECT_WHYS)[number];

/** The node event that made a provider's consumers suspect, as the queue's Redis keeps it. No secret in it. */
export interface SuspectEvent {
  /** `host:port`. */
  node: string;
  why: SuspectWhy;
  /** When a worker saw it (ISO). */
  at: string;
  /** How many consumers it concerned (those of the provider asked about then). */
  of: number;
  /** When every consumer it made suspect had been asked (ISO); absent while some are not. */
  asked?: string | undefined;
}

export const suspectEventCodec: z.ZodType<SuspectEvent> = z.object({
  node: noteAddress,
  why: z.enum(SUSPECT_WHYS),
  at: z.string().max(40),
  of: z.number().int().nonnegative(),
  asked: z.string().max(40).optional(),
});

export const orphanReportCodec: z.ZodType<OrphanReport> = z.object({
  at: z.string(),
  prefix: z.string(),
  logins: z.array(z.string()),
});

const STATE_NAMES = Object.keys(STATE_MEANINGS) as [ConsumerStateName, ...ConsumerStateName[]];

/** A timeline event as its stream entry holds it (the field `e`, JSON). */
export const timelineEventCodec: z.ZodType<TimelineEvent> = z.object({
  at: z.number(),
  kind: z.enum(TIMELINE_KINDS),
  key: z.string(),
  // a state an earlier release named otherwise reads in this chart's words
  state: z.preprocess(currentStateOf, z.enum(STATE_NAMES)),
  reason: z.string().nullable(),
  tookMs: z.number().nonnegative().optional(),
  // a state, cause or node this holdfast does not know reads as none, not as an event to drop
  from: z.preprocess(currentStateOf, z.enum(STATE_NAMES)).optional().catch(undefined),
  by: z.enum(TRANSITION_CAUSES).optional().catch(undefined),
  node: z.string().max(NODE_NAME_BYTES).optional().catch(undefined),
});

/** Failed logins of one consumer's login from one client address, in one read of its backend's log. */
export interface FailedLoginEvent {
  /** When the last of them was recorded (ms since the epoch). */
  at: number;
  address: string;
  count: number;
}

/** A consumer whose app fails to log in (its login held): its failed logins within the note's window, newest first. */
export interface TurnedAwayConsumer {
  key: string;
  count: number;
  events: FailedLoginEvent[];
}

/**
 * A provider's failed logins within the last `windowMs`, as the reader of its backend's log last noted them (kept a
 * few intervals: a reader that stops leaves none).
 */
export interface FailedLoginsNote {
  at: string;
  windowMs: number;
  /** Nodes whose log was read. */
  nodes: number;
  /** Nodes whose log may have dropped entries before they were read, within the window. */
  lost: string[];
  /** Failed logins of logins no consumer of the provider claims (counted, never attributed). */
  unattributed: number;
  /** The consumers turned away, most failed logins first ({@link FAILED_LOGINS_LISTED} at most). */
  consumers: TurnedAwayConsumer[];
  /** Consumers turned away beyond those listed. */
  more: number;
}

/** Consumers listed per provider in a failed-logins note, at most. */
export const FAILED_LOGINS_LISTED = 100;
/** Events kept per consumer listed, at most. */
export const FAILED_LOGIN_EVENTS = 32;

const failedLoginEventCodec = z.object({
  at: z.number(),
  address: z.string().max(80),
  count: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
});

export const failedLoginsNoteCodec: z.ZodType<FailedLoginsNote> = z.object({
  at: z.string().max(40),
  windowMs: z.number().int().min(0),
  nodes: z.number().int().min(0).max(NODES_NOTED),
  lost: z.array(noteAddress).max(NODES_NOTED),
  unattributed: z.number().int().min(0),
  consumers: z
    .array(
      z.object({
        key: z.string().max(300),
        count: z.number().int().min(0),
        events: z.array(failedLoginEventCodec).max(FAILED_LOGIN_EVENTS),
      }),
    )
    .max(FAILED_LOGINS_LISTED),
  more: z.number().int().min(0),
});

/** `raw` (JSON) checked against `codec`; null when absent or not what it should be. */
export function decodeJson<T>(codec: z.ZodType<T>, raw: string | null | undefined): T | null {
  if (!raw) return null;
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    return null;
  }
  const decoded = codec.safeParse(value);
  return decoded.success ? decoded.data : null;
}

/** A record revision as Redis keeps it (a decimal string); null when absent or not one. */
export function decodeRevision(raw: string | null | undefined): number | null {
  if (raw === null || raw === undefined || !/^\d+$/.test(raw)) return null;
  return Number(raw);
}
