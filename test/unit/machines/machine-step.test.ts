/** How the engine drives the machine: steps, waits by name, persisted consumers and their versions. */
import { describe, expect, it } from 'vitest';
import type { ConsumerEvent } from '../../../machines/consumer-events.js';
import { createConsumerMachine } from '../../../machines/consumer-machine.js';
import { verifyDelay, type ConsumerTiming } from '../../../machines/delays.js';
import {
  firstSnapshot,
  MACHINE_VERSION,
  persist,
  readPersisted,
  restore,
  samePersisted,
  step,
  waitEnded,
  WAIT_NAMES,
  type ConsumerSnapshot,
  type PersistedConsumer,
} from '../../../machines/machine-step.js';

const timing: ConsumerTiming = {
  verifyEveryMs: 60_000,
  brakeMaxMs: 3_600_000,
  retryBaseMs: 1000,
  jitter: 0.1,
  secretGraceMs: 60_000,
};
const machine = createConsumerMachine(timing);
const key = 'cache/app-a';

function held(): ConsumerSnapshot {
  let snapshot = firstSnapshot(machine, key);
  const events: ConsumerEvent[] = [
    { type: 'DESIRED', specHash: 's' },
    { type: 'APPLIED', specHash: 's', secretMac: 'm' },
  ];
  for (const event of events) snapshot = step(machine, snapshot, event).snapshot;
  return snapshot;
}

describe('a step', () => {
  it('names the effect and the wait the new state asks for, in words of its own', () => {
    const first = firstSnapshot(machine, key);
    const applying = step(machine, first, { type: 'DESIRED', specHash: 's' });
    expect(applying).toMatchObject({ effect: 'apply', wait: undefined, said: [] });
    const rested = step(machine, applying.snapshot, { type: 'APPLIED', specHash: 's', secretMac: 'm' });
    expect(rested.snapshot.value).toBe('held');
    expect(rested.wait).toEqual({ name: 'verify', ms: verifyDelay(key, timing) });
    expect(rested.effect).toBeUndefined();
  });

  it('ends a wait by its name and the state it was asked in, cancelling it', () => {
    const checking = step(machine, held(), waitEnded('verify', 'held'));
    expect(checking).toMatchObject({ effect: 'check', wait: null });
    expect(checking.snapshot.value).toBe('checking');
  });

  it('ignores a wait that does not belong to the state', () => {
    const snapshot = held();
    const ignored = step(machine, snapshot, waitEnded('retry', 'retrying'));
    expect(ignored.snapshot.value).toBe('held');
    expect(ignored.effect).toBeUndefined();
  });

  it('carries what the log must say', () => {
    const checking = step(machine, held(), waitEnded('verify', 'held'));
    const lost = step(machine, checking.snapshot, { type: 'NOT_HELD', reason: 'missing', detail: 'no user' });
    expect(lost.effect).toBe('apply');
    expect(lost.said).toEqual([{ level: 'warn', message: 'not held (missing: no user); applying again now' }]);
  });
});

describe('a persisted consumer', () => {
  it('restores to the same state and context, and compares equal when nothing changed', () => {
    const snapshot = held();
    const stored = persist(snapshot);
    expect(JSON.parse(JSON.stringify(stored))).toEqual(stored); // plain data
    const again = restore(machine, stored);
    expect(samePersisted(persist(again), stored)).toBe(true);
    const checked = step(machine, step(machine, again, waitEnded('verify', 'held')).snapshot, { type: 'HELD' });
    // the first check after an apply changes nothing durable: the routine check that finds it held writes no record
    expect(samePersisted(persist(checked.snapshot), stored)).toBe(true);
    const twice = step(machine, step(machine, checked.snapshot, waitEnded('verify', 'held')).snapshot, {
      type: 'HELD',
    });
    expect(samePersisted(persist(twice.snapshot), persist(checked.snapshot))).toBe(true);
  });

  it('reads the current version as it is', () => {
    const stored = persist(held());
    expect(readPersisted(MACHINE_VERSION, stored)).toEqual({ consumer: stored });
  });

  it('migrates a record written before versions (XState’s whole snapshot)', () => {
    const { context } = persist(held());
    const v1 = { status: 'active', value: 'held', historyValue: {}, context, children: {} };
    expect(readPersisted(undefined, v1)).toEqual({ consumer: { state: 'held', context } });
  });

  it("reads a state under its former name (machine versions 1 and 2) in this chart's words, and steps it", () => {
    const { context } = persist(held());
    const formerName = 'verifying'; // the former name of `checking`
    const v2 = readPersisted(2, { version: 2, state: formerName, context });
    const v1 = readPersisted(undefined, {
      status: 'active',
      value: formerName,
      historyValue: {},
      context,
      children: {},
    });
    expect([v2, v1]).toEqual([
      { consumer: { state: 'checking', context } },
      { consumer: { state: 'checking', context } },
    ]);
    // restored and stepped as a consumer this release left mid-check would be
    const { consumer } = v2 as { consumer: PersistedConsumer };
    const restored = restore(machine, consumer);
    expect(restored.value).toBe('checking');
    expect(step(machine, restored, { type: 'HELD' }).snapshot.value).toBe('held');
    expect(step(machine, restored, { type: 'REDO' })).toMatchObject({ effect: 'check' });
    // this version writes the state's name now; a former name in it is not one of its states
    expect(readPersisted(MACHINE_VERSION, { state: formerName, context })).toEqual({
      problem: `no state "${formerName}" in machine version ${MACHINE_VERSION}`,
    });
  });

  it('refuses, in words, a newer version, an unknown state or a record without context', () => {
    const stored = persist(held());
    expect(readPersisted(MACHINE_VERSION + 1, stored)).toEqual({
      problem: `written by machine version ${MACHINE_VERSION + 1}; this holdfast reads versions 1 to ${MACHINE_VERSION}`,
    });
    expect(readPersisted(MACHINE_VERSION, { ...stored, state: 'sleeping' })).toEqual({
      problem: `no state "sleeping" in machine version ${MACHINE_VERSION}`,
    });
    expect(readPersisted(MACHINE_VERSION, { state: 'held' })).toEqual({
      problem: `no context in a machine version ${MACHINE_VERSION} record`,
    });
  });
});

describe('the waits', () => {
  it('the engine knows by name are exactly the delays the chart defines', () => {
    expect([...WAIT_NAMES].sort()).toEqual(Object.keys(machine.implementations.delays).sort());
  });
});
