/**
 * The record decoded once, at the store's edge: this version's, version 1's, or unreadable, in words; never a throw.
 */
import { describe, expect, it } from 'vitest';
import type { ConsumerContext } from '../../../machines/consumer-machine.js';
import { MACHINE_VERSION, WAIT_NAMES } from '../../../machines/machine-step.js';
import type { ConsumerRecord } from '../../../src/store/consumer-record.js';
import {
  decodeMachine,
  decodeRecord,
  encodeDesired,
  encodeMachine,
  encodeRecord,
} from '../../../src/store/record-codec.js';

const context: ConsumerContext = {
  key: 'cache/app-a',
  appliedSpecHash: 's',
  appliedSecretMac: 'm',
  brakeCount: 0,
  retryCount: 0,
  reapplying: false,
  secretWaits: 0,
  secretWaitedMs: 0,
  blockedRepeats: 0,
  reason: null,
};
const at = new Date('2026-11-30T10:00:00Z');
const desired = {
  login: 'app_a',
  values: { keys: ['app-a:*'], 'a.b': { $x: 1 } },
  secretPath: '/g/app-a',
  specHash: 's',
  source: '/c/cache.yaml:3',
  removed: false,
  problems: [],
};

const record: ConsumerRecord = {
  _id: 'cache/app-a',
  provider: 'cache',
  consumerId: 'app-a',
  desired,
  desiredAt: 1_700_000_000_000,
  machine: { state: 'held', context },
  stateSince: at,
  rev: 7,
  appliedAt: at,
  timer: { rev: 7, wait: 'verify', dueAt: at },
  effectUntil: null,
  lastCheck: { at, outcome: 'held', detail: null },
  history: [{ at, from: 'applying', to: 'held', reason: null }],
  createdAt: at,
  updatedAt: at,
};

/** The document holdfast wrote before machine versions (version 1), in `state`. */
function versionOne(state: string): Record<string, unknown> {
  const { machine: _machine, appliedAt: _appliedAt, desiredAt: _desiredAt, ...kept } = encodeRecord(record);
  return {
    ...kept,
    snapshot: { status: 'active', value: state, historyValue: {}, context, children: {} },
    state,
    dirty: false,
    desiredRev: 3,
    applied: { specHash: 's', secretMac: 'm', at },
    nextDueAt: at,
    timer: { epoch: 7, event: `xstate.after.verify.consumer.${state}`, dueAt: at },
  };
}

describe('a stored record, decoded', () => {
  it('reads this version as it was written: its nested parts as JSON text, keys as they are', () => {
    const stored = encodeRecord(record);
    expect(JSON.parse(stored.machine as string)).toEqual({ version: MACHINE_VERSION, state: 'held', context });
    expect(JSON.parse(stored.desired as string)).toMatchObject({ values: { keys: ['app-a:*'], 'a.b': { $x: 1 } } });
    expect(JSON.parse(stored.history as string)).toEqual([[at.getTime(), 'applying', 'held', null]]);
    expect([stored.lastCheck, stored.timer]).toEqual([
      JSON.stringify([at.getTime(), 'held', null]),
      JSON.stringify([7, 'verify', at.getTime()]),
    ]);
    expect(decodeRecord(stored)).toEqual(record);
    expect(decodeRecord({ ...stored, refused: { source: '/c/cache.yaml:4', problems: ['too wide'] } })).toEqual({
      ...record,
      refused: { source: '/c/cache.yaml:4', problems: ['too wide'] },
    });
  });

  it("reads the state and history entries the previous release wrote under a former name in this chart's words", () => {
    const former = 'verifying'; // the former name of `checking`, written until machine version 2
    const stored = encodeRecord(record);
    const previous = {
      ...stored,
      machine: JSON.stringify({ version: 2, state: former, context }),
      history: JSON.stringify([
        [at.getTime(), 'held', former, null, 'check'],
        [at.getTime(), former, 'lost', 'missing', 'check'],
      ]),
    };
    expect(decodeRecord(previous)).toEqual({
      ...record,
      machine: { state: 'checking', context },
      history: [
        { at, from: 'held', to: 'checking', reason: null, by: 'check' },
        { at, from: 'checking', to: 'lost', reason: 'missing', by: 'check' },
      ],
    });
    // and as the sub-documents releases before JSON text kept
    const nested = { ...record, machine: { version: 2, state: former, context } };
    expect(decodeRecord(nested)).toMatchObject({ machine: { state: 'checking', context } });
    // written again, under the state's name now
    expect(JSON.parse(encodeRecord(decodeRecord(previous) as ConsumerRecord).machine as string)).toEqual({
      version: MACHINE_VERSION,
      state: 'checking',
      context,
    });
  });

  it('reads the sub-documents earlier versions wrote (keys the wire server refuses encoded and decoded)', () => {
    const nested = { ...record, machine: encodeMachine(record.machine), desired: encodeDesired(desired) };
    expect(nested.desired).toMatchObject({ values: { keys: ['app-a:*'], 'a%2Eb': { '%24x': 1 } } });
    expect(decodeRecord(nested)).toEqual(record);
    expect(
      decodeRecord({
        ...encodeRecord(record),
        history: record.history,
        timer: { epoch: 7, wait: 'verify', dueAt: at },
      }),
    ).toEqual(record);
  });

  it('migrates version 1: the snapshot’s state, the time of apply, the wait its timer named', () => {
    expect(decodeRecord(versionOne('applying'))).toEqual({
      ...record,
      desiredAt: 0,
      machine: { state: 'applying', context },
    });
    expect(decodeRecord({ ...versionOne('held'), applied: null })).toEqual({
      ...record,
      desiredAt: 0,
      appliedAt: null,
    });
  });

  it('reads a version-1 record this version rewrote in part: each field from the form it has', () => {
    const mixed = {
      ...versionOne('held'),
      machine: encodeMachine({ state: 'lost', context }),
      timer: { epoch: 8, wait: 'retry', dueAt: at },
    };
    delete (mixed as { snapshot?: unknown }).snapshot;
    expect(decodeRecord(mixed)).toEqual({
      ...record,
      desiredAt: 0,
      machine: { state: 'lost', context },
      timer: { rev: 8, wait: 'retry', dueAt: at },
    });
  });

  it('says in words why it cannot read a newer version’s record or a damaged one, and what it could read of it', () => {
    const stored = encodeRecord(record);
    const seen = { _id: 'cache/app-a', rev: 7, since: at, login: 'app_a' };
    expect(decodeRecord({ ...stored, machine: { version: 99, phase: 'steady' } })).toEqual({
      ...seen,
      unreadable: `written by machine version 99; this holdfast reads versions 1 to ${MACHINE_VERSION}`,
    });
    expect(
      decodeRecord({ ...stored, machine: JSON.stringify({ version: MACHINE_VERSION, state: 'sleeping', context }) }),
    ).toMatchObject({ unreadable: `no state "sleeping" in machine version ${MACHINE_VERSION}` });
    expect(
      decodeRecord({ ...stored, machine: { version: MACHINE_VERSION, state: 'sleeping', context } }),
    ).toMatchObject({ unreadable: `no state "sleeping" in machine version ${MACHINE_VERSION}` });
    expect(decodeRecord({ ...stored, machine: undefined })).toEqual({ ...seen, unreadable: 'it has no machine' });
    expect(decodeRecord({ ...stored, desired: 'not a spec' })).toEqual({
      ...seen,
      login: null,
      unreadable: 'its desired spec is not JSON text',
    });
    expect(decodeRecord({ ...stored, desired: '[1]' })).toEqual({
      ...seen,
      login: null,
      unreadable: 'its desired spec is not a document',
    });
    expect(decodeRecord({ ...stored, desired: 42 })).toEqual({
      ...seen,
      login: null,
      unreadable: 'its desired spec is not a document',
    });
    expect(decodeRecord({ ...stored, rev: -1 })).toEqual({
      ...seen,
      rev: null,
      unreadable: 'its revision is not a count',
    });
    expect(
      decodeRecord({ ...stored, timer: { epoch: 7, event: 'xstate.after.nap.consumer.held', dueAt: at } }),
    ).toMatchObject({ unreadable: `its timer names no wait of this holdfast (${WAIT_NAMES.join(', ')})` });
    expect(decodeRecord({ ...stored, history: 'long' })).toMatchObject({ unreadable: 'its history is not JSON text' });
    expect(decodeRecord({ ...stored, history: '{}' })).toMatchObject({ unreadable: 'its history is not a list' });
    expect(decodeRecord({ ...stored, history: 7 })).toMatchObject({ unreadable: 'its history is not a list' });
    expect(decodeRecord({ ...stored, history: '[[1, "applying"]]' })).toMatchObject({
      unreadable: 'its history has an entry that is not a transition',
    });
    expect(decodeRecord({ ...stored, timer: '[7, "nap", 1]' })).toMatchObject({
      unreadable: `its timer names no wait of this holdfast (${WAIT_NAMES.join(', ')})`,
    });
    expect(decodeRecord({ ...stored, timer: '[7, "verify", "soon"]' })).toMatchObject({
      unreadable: 'its timer due time is not a date',
    });
    expect(decodeRecord({ ...stored, lastCheck: '[1, "fine", null]' })).toMatchObject({
      unreadable: 'its last check has no outcome of this holdfast',
    });
    expect(decodeRecord({ ...stored, history: [{ at, from: 'applying' }] })).toMatchObject({
      unreadable: 'its history has an entry that is not a transition',
    });
    expect(decodeRecord({ ...stored, lastCheck: { at, outcome: 'fine' } })).toMatchObject({
      unreadable: 'its last check has no outcome of this holdfast',
    });
    expect(decodeRecord({ ...stored, _id: 'app-a' })).toMatchObject({
      _id: 'app-a',
      unreadable: 'its key is not <provider>/<id>',
    });
  });

  it('keeps who caused each transition and on which node, and reads the four-part entries written before them', () => {
    const history: ConsumerRecord['history'] = [
      { at, from: 'held', to: 'lost', reason: 'missing on 10.0.0.6:6379', by: 'check', node: '10.0.0.6:6379' },
      { at, from: 'lost', to: 'held', reason: 'applied again', by: 'heal' },
      { at, from: 'pending', to: 'applying', reason: null },
    ];
    const stored = encodeRecord({ ...record, history });
    expect(JSON.parse(stored.history as string)).toEqual([
      [at.getTime(), 'held', 'lost', 'missing on 10.0.0.6:6379', 'check', '10.0.0.6:6379'],
      [at.getTime(), 'lost', 'held', 'applied again', 'heal'],
      [at.getTime(), 'pending', 'applying', null],
    ]);
    expect(decodeRecord(stored)).toEqual({ ...record, history });
    // a cause of a newer holdfast reads as none, a node too long is cut: the record stays readable
    const newer = JSON.stringify([[at.getTime(), 'held', 'lost', null, 'operator-x', 'n'.repeat(500)]]);
    expect(decodeRecord({ ...stored, history: newer })).toMatchObject({
      history: [{ at, from: 'held', to: 'lost', reason: null, node: 'n'.repeat(200) }],
    });
    expect((decodeRecord({ ...stored, history: newer }) as ConsumerRecord).history[0]).not.toHaveProperty('by');
  });

  it('never throws, whatever it is given', () => {
    for (const raw of [
      null,
      undefined,
      'text',
      42,
      [],
      { _id: 'cache/x' },
      { _id: 'cache/x', machine: null, desired: {} },
      { _id: { nested: 1 } },
    ]) {
      expect(() => decodeRecord(raw)).not.toThrow();
      expect(decodeRecord(raw)).toHaveProperty('unreadable');
    }
  });

  it('decodes a ticket’s machine the same way', () => {
    expect(decodeMachine(encodeMachine({ state: 'held', context }))).toEqual({ consumer: { state: 'held', context } });
    expect(decodeMachine({ version: 'two', state: 'held', context })).toEqual({
      problem: 'its machine version is not a number',
    });
    expect(decodeMachine('held')).toEqual({ problem: 'no state undefined in machine version 1' });
  });
});
