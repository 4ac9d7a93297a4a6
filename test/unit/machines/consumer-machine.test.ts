/**
 * The consumer machine through pure transitions: each rule of the design as an explicit
 * sequence of events, and every state reached by a generated path.
 */
import { getShortestPaths } from '@xstate/graph';
import { initialTransition, transition, type SnapshotFrom } from 'xstate';
import { describe, expect, it } from 'vitest';
import type { Announcement, ConsumerEvent } from '../../../machines/consumer-events.js';
import {
  CONSUMER_STATES,
  createConsumerMachine,
  type ConsumerMachine,
  type ConsumerStateName,
} from '../../../machines/consumer-machine.js';
import { brakeDelay, retryDelay, verifyDelay, type ConsumerTiming } from '../../../machines/delays.js';

const timing: ConsumerTiming = {
  verifyEveryMs: 60_000,
  brakeMaxMs: 3_600_000,
  retryBaseMs: 1000,
  jitter: 0.1,
  secretGraceMs: 60_000,
};
const machine = createConsumerMachine(timing);
type Snapshot = SnapshotFrom<ConsumerMachine>;

const AFTER = {
  verify: (state: string) => ({ type: `xstate.after.verify.consumer.${state}` }),
  brake: { type: 'xstate.after.brake.consumer.backoff' },
  retry: (state: string) => ({ type: `xstate.after.retry.consumer.${state}` }),
  secretWait: { type: 'xstate.after.secretWait.consumer.waitingForSecret' },
};
const applied: ConsumerEvent = { type: 'APPLIED', specHash: 'spec-1', secretMac: 'mac-1' };
const notHeld: ConsumerEvent = { type: 'NOT_HELD', reason: 'missing', detail: 'no user app_a' };

interface Step {
  state: ConsumerStateName;
  effects: string[];
  timer: { event: string; delay: number } | null | undefined;
  said: Announcement[];
}

/** A consumer driven by events, remembering what each step asked for. */
class Driver {
  snapshot: Snapshot;
  last!: Step;

  constructor(
    key = 'cache/app-a',
    readonly chart: ConsumerMachine = machine,
  ) {
    [this.snapshot] = initialTransition(chart, { key });
  }

  send(...events: Array<ConsumerEvent | { type: string }>): Step {
    for (const event of events) {
      const [next, actions] = transition(this.chart, this.snapshot, event as ConsumerEvent);
      this.snapshot = next;
      let timer: Step['timer'];
      const said: Announcement[] = [];
      const effects: string[] = [];
      for (const action of actions) {
        const type: string = action.type;
        if (type === 'xstate.raise') {
          const p = action.params as { event: { type: string }; delay?: number };
          if (p.delay !== undefined) timer = { event: p.event.type, delay: p.delay };
        } else if (type === 'xstate.cancel') timer = timer ?? null;
        else if (type === 'say') said.push(action.params as Announcement);
        else effects.push(type);
      }
      this.last = { state: this.snapshot.value, effects, timer, said };
    }
    return this.last;
  }

  get context() {
    return this.snapshot.context;
  }

  /** Applied and held, the normal resting place. */
  static held(chart: ConsumerMachine = machine): Driver {
    const d = new Driver(undefined, chart);
    d.send({ type: 'DESIRED', specHash: 'spec-1' }, applied);
    return d;
  }
}

describe('first apply and routine checks', () => {
  it('applies a declared consumer, then checks it every verify interval', () => {
    const d = new Driver();
    expect(d.send({ type: 'DESIRED', specHash: 'spec-1' })).toMatchObject({ state: 'applying', effects: ['apply'] });
    const held = d.send(applied);
    expect(held).toMatchObject({ state: 'held', effects: [] });
    expect(held.timer).toEqual({ event: AFTER.verify('held').type, delay: verifyDelay('cache/app-a', timing) });
    expect(d.context).toMatchObject({ appliedSpecHash: 'spec-1', appliedSecretMac: 'mac-1', brakeCount: 0 });

    expect(d.send(AFTER.verify('held'))).toMatchObject({ state: 'checking', effects: ['check'] });
    expect(d.send({ type: 'HELD' })).toMatchObject({ state: 'held', effects: [], said: [] });
  });

  it('a routine held check leaves the persisted snapshot as it was (nothing to rewrite)', () => {
    const d = Driver.held();
    d.send(AFTER.verify('held'), { type: 'HELD' });
    const before = JSON.stringify(machine.getPersistedSnapshot(d.snapshot));
    d.send(AFTER.verify('held'), { type: 'HELD' });
    expect(JSON.stringify(machine.getPersistedSnapshot(d.snapshot))).toBe(before);
  });

  it('spreads checks by jitter derived from the key, within ±jitter/2 of the interval', () => {
    const delays = Array.from({ length: 200 }, (_, i) => verifyDelay(`cache/c${i}`, timing));
    expect(Math.min(...delays)).toBeGreaterThanOrEqual(timing.verifyEveryMs * 0.95);
    expect(Math.max(...delays)).toBeLessThanOrEqual(timing.verifyEveryMs * 1.05);
    expect(new Set(delays).size).toBeGreaterThan(150);
    expect(verifyDelay('cache/c1', timing)).toBe(verifyDelay('cache/c1', timing));
  });

  it('ignores a desired spec it already applied, and applies a changed one', () => {
    const d = Driver.held();
    expect(d.send({ type: 'DESIRED', specHash: 'spec-1' })).toMatchObject({ state: 'held', effects: [] });
    expect(d.send({ type: 'DESIRED', specHash: 'spec-2' })).toMatchObject({ state: 'applying', effects: ['apply'] });
    expect(d.context.reason).toBe('spec changed');
  });

  it('applies again when a check finds the secret rotated, without counting a loss', () => {
    const d = Driver.held();
    d.send(AFTER.verify('held'));
    expect(d.send({ type: 'CHANGED', what: 'grant secret rotated' })).toMatchObject({
      state: 'applying',
      effects: ['apply'],
      said: [],
    });
    expect(d.send(applied)).toMatchObject({ state: 'held' });
    expect(d.context.brakeCount).toBe(0);
  });

  it("keeps the fingerprint a check proved held (another fingerprint key's), applying nothing", () => {
    const d = Driver.held();
    d.send(AFTER.verify('held'));
    expect(d.send({ type: 'HELD', secretMac: 'mac-under-another-key' })).toMatchObject({
      state: 'held',
      effects: [],
      said: [],
    });
    expect(d.context).toMatchObject({ appliedSecretMac: 'mac-under-another-key', appliedSpecHash: 'spec-1' });
    // a check that proves nothing new keeps what was kept
    d.send(AFTER.verify('held'));
    d.send({ type: 'HELD' });
    expect(d.context.appliedSecretMac).toBe('mac-under-another-key');
  });
});

describe('ask, do not remember (rule 1)', () => {
  it('not held: applies again at once and says why', () => {
    const d = Driver.held();
    d.send(AFTER.verify('held'));
    const lost = d.send(notHeld);
    expect(lost).toMatchObject({ state: 'lost', effects: ['apply'] });
    expect(lost.said).toEqual([{ level: 'warn', message: 'not held (missing: no user app_a); applying again now' }]);
    expect(d.send(applied)).toMatchObject({ state: 'held' });
    expect(d.context.brakeCount).toBe(1);
  });

  it('a check that throws or times out re-applies nothing and asks again next interval', () => {
    for (const timedOut of [false, true]) {
      const d = Driver.held();
      d.send(AFTER.verify('held'));
      const step = d.send({ type: 'CHECK_FAILED', error: 'connect ECONNREFUSED', timedOut });
      expect(step).toMatchObject({ state: 'couldNotAsk', effects: [] });
      expect(step.timer).toEqual({
        event: AFTER.verify('couldNotAsk').type,
        delay: verifyDelay('cache/app-a', timing),
      });
      expect(d.context.reason).toBe('could not ask: connect ECONNREFUSED');
      expect(d.send(AFTER.verify('couldNotAsk'))).toMatchObject({ state: 'checking', effects: ['check'] });
      expect(d.send({ type: 'HELD' })).toMatchObject({ state: 'held', effects: [] });
    }
  });
});

describe('the brake (rule 2)', () => {
  it('still not held after successful re-applies: re-applies at doubling intervals up to brakeMax, loudly', () => {
    const d = Driver.held();
    d.send(AFTER.verify('held'), notHeld, applied); // the first re-apply: back to held, checked after one interval
    expect(d.last.state).toBe('held');
    const waits: number[] = [];
    for (let i = 0; i < 9; i++) {
      const check = d.last.state === 'held' ? AFTER.verify('held') : AFTER.brake;
      d.send(check);
      const lost = d.send(notHeld);
      expect(lost.state).toBe('lost');
      expect(lost.said[0]?.level).toBe('error');
      expect(lost.said[0]?.message).toMatch(
        /^still not held after \d+ successful re-appl(?:y|ies) \(missing: no user app_a\)/,
      );
      const backoff = d.send(applied);
      expect(backoff.state).toBe('backoff');
      waits.push(backoff.timer!.delay);
    }
    expect(waits).toEqual([120_000, 240_000, 480_000, 960_000, 1_920_000, 3_600_000, 3_600_000, 3_600_000, 3_600_000]);
    expect(d.context.brakeCount).toBe(10);
  });

  it('a failed re-apply is retried with its own backoff and leaves the count unchanged', () => {
    const d = Driver.held();
    d.send(AFTER.verify('held'), notHeld, applied, AFTER.verify('held'), notHeld);
    expect(d.context.brakeCount).toBe(1);
    const retries: number[] = [];
    for (let i = 0; i < 8; i++) {
      const step = d.send({ type: 'APPLY_FAILED', error: 'ERR connection lost' });
      expect(step.state).toBe('retrying');
      expect(step.said[0]).toMatchObject({ level: 'warn' });
      retries.push(step.timer!.delay);
      expect(d.send(AFTER.retry('retrying'))).toMatchObject({ state: 'lost', effects: ['apply'] });
      expect(d.context.brakeCount).toBe(1);
    }
    expect(retries).toEqual([1000, 2000, 4000, 8000, 16_000, 32_000, 60_000, 60_000]);
    expect(d.send(applied).state).toBe('backoff');
    expect(d.context.brakeCount).toBe(2);
  });

  it('a loss the backend forgot is not counted: no brake, however many re-applies came before', () => {
    const d = Driver.held();
    // a re-apply whose confirmation could not ask (a failover under way): the count stays at 1
    d.send(AFTER.verify('held'), notHeld, applied, AFTER.verify('held'));
    d.send({ type: 'CHECK_FAILED', error: 'node down', timedOut: false }, AFTER.verify('couldNotAsk'));
    expect(d.context.brakeCount).toBe(1);
    // then a node restarted empty: the loss is its forgetting, not a disagreement
    const lost = d.send({ ...notHeld, node: '10.0.0.6:6379', forgot: true });
    expect(lost.state).toBe('lost');
    expect(lost.said[0]?.message).not.toMatch(/still not held/);
    expect(d.send(applied).state).toBe('held');
    expect(d.context.brakeCount).toBe(1);
    // the same sequence without the forgetting brakes
    const braked = Driver.held();
    braked.send(AFTER.verify('held'), notHeld, applied, AFTER.verify('held'));
    braked.send({ type: 'CHECK_FAILED', error: 'node down', timedOut: false }, AFTER.verify('couldNotAsk'));
    braked.send({ ...notHeld, node: '10.0.0.6:6379' });
    expect(braked.send(applied).state).toBe('backoff');
  });

  it('a held check resets the count', () => {
    const d = Driver.held();
    d.send(AFTER.verify('held'), notHeld, applied, AFTER.verify('held'), notHeld, applied);
    expect(d.context.brakeCount).toBe(2);
    d.send(AFTER.brake, { type: 'HELD' });
    expect(d.last.state).toBe('held');
    expect(d.context.brakeCount).toBe(0);
  });
});

describe('grant secrets (rule 7)', () => {
  it('a missing secret is a quiet wait, then one warning past the grace period', () => {
    const d = new Driver();
    d.send({ type: 'DESIRED', specHash: 'spec-1' });
    const warnings: string[] = [];
    let waited = 0;
    for (let i = 0; i < 12; i++) {
      const step = d.send({ type: 'SECRET_MISSING', path: '/grants/a.secret' });
      expect(step.state).toBe('waitingForSecret');
      warnings.push(...step.said.map((s) => s.message));
      waited += step.timer!.delay;
      d.send(AFTER.secretWait);
      expect(d.last).toMatchObject({ state: 'applying', effects: ['apply'] });
    }
    expect(waited).toBeGreaterThan(timing.secretGraceMs);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/^grant secret \/grants\/a.secret still does not exist after/);
  });

  it('an unreadable secret blocks, is said once, counted after, and heals by itself', () => {
    const d = new Driver();
    d.send({ type: 'DESIRED', specHash: 'spec-1' });
    const detail = '/grants/a.secret (EACCES; owner 0:0, mode 0600; holdfast runs as uid 1000 gid 1000)';
    const first = d.send({ type: 'SECRET_UNREADABLE', detail });
    expect(first.state).toBe('blocked');
    expect(first.said).toEqual([
      {
        level: 'error',
        message: `grant secret cannot be read: ${detail}; blocked until it can (said once, repeats are counted)`,
      },
    ]);
    for (let i = 0; i < 5; i++) {
      d.send(AFTER.verify('blocked'));
      expect(d.send({ type: 'SECRET_UNREADABLE', detail }).said).toEqual([]);
    }
    expect(d.context.blockedRepeats).toBe(6);
    d.send(AFTER.verify('blocked'));
    const healed = d.send(applied);
    expect(healed.state).toBe('held');
    expect(healed.said).toEqual([{ level: 'info', message: 'grant secret readable again after 6 refusals' }]);
    expect(d.context.blockedRepeats).toBe(0);
  });
});

describe('an observe-only provider', () => {
  it('reports a consumer its backend does not hold once, asks again every interval, and is held when the backend holds it', () => {
    const d = new Driver();
    d.send({ type: 'DESIRED', specHash: 'spec-1' });
    const missing = { type: 'NOT_APPLIED', reason: 'missing', detail: 'no such ACL user' } as const;
    const first = d.send(missing);
    expect(first.state).toBe('observedNotHeld');
    expect(first.said).toEqual([
      {
        level: 'warn',
        message: 'not held (missing: no such ACL user); its provider only observes: reported, not applied',
      },
    ]);
    for (let i = 0; i < 3; i++) {
      expect(d.send(AFTER.verify('observedNotHeld'))).toMatchObject({ state: 'applying', effects: ['apply'] });
      expect(d.send(missing)).toMatchObject({ state: 'observedNotHeld', said: [] });
    }
    d.send(AFTER.verify('observedNotHeld'));
    expect(d.send({ ...missing, reason: 'password-differs' }).said).toHaveLength(1);
    d.send(AFTER.verify('observedNotHeld'));
    expect(d.send(applied).state).toBe('held');
  });
});

describe('policy and removal', () => {
  it('a consumer refused by policy is never applied until its spec is accepted', () => {
    const d = new Driver();
    const step = d.send({ type: 'REJECT', problems: ['values.keys[0]: "*" is outside the key prefix'] });
    expect(step).toMatchObject({ state: 'rejected', effects: [] });
    expect(step.said[0]?.level).toBe('error');
    expect(d.send({ type: 'CHECK_NOW' }, { type: 'REAPPLY' })).toMatchObject({ state: 'rejected', effects: [] });
    expect(d.send({ type: 'DESIRED', specHash: 'spec-2' })).toMatchObject({ state: 'applying', effects: ['apply'] });
  });

  it('removes a consumer no longer declared, retrying a failed remove, and ends', () => {
    const d = Driver.held();
    expect(d.send({ type: 'REMOVE' })).toMatchObject({ state: 'removing', effects: ['remove'], timer: null });
    expect(d.send({ type: 'REMOVE_FAILED', error: 'ECONNREFUSED' })).toMatchObject({ state: 'removeRetrying' });
    expect(d.send(AFTER.retry('removeRetrying'))).toMatchObject({ state: 'removing', effects: ['remove'] });
    expect(d.send({ type: 'REMOVED' }).state).toBe('removed');
    expect(d.snapshot.status).toBe('done');
  });

  it('a remove the backend refuses (a role that still owns objects) is said once and not retried until asked', () => {
    const d = Driver.held();
    d.send({ type: 'REMOVE' });
    const refused = d.send({ type: 'REMOVE_REFUSED', error: 'role "app" cannot be dropped: owner of table t' });
    expect(refused).toMatchObject({ state: 'removeRefused', effects: [] });
    expect(refused.timer ?? null).toBeNull(); // nothing scheduled: no retry on a timer
    expect(refused.said).toEqual([
      {
        level: 'error',
        message:
          'remove refused by the backend (role "app" cannot be dropped: owner of table t); not retried until asked (holdfast reapply)',
      },
    ]);
    expect(d.context.reason).toBe('remove refused: role "app" cannot be dropped: owner of table t');
    expect(d.send({ type: 'REMOVE' })).toMatchObject({ state: 'removeRefused', effects: [] });
    expect(d.send({ type: 'REAPPLY' })).toMatchObject({ state: 'removing', effects: ['remove'] });
    expect(d.send({ type: 'REMOVED' }).state).toBe('removed');
  });

  it('an apply the backend refuses (a role holdfast did not make) is said once and not retried until the spec changes or someone asks', () => {
    const d = Driver.held();
    d.send({ type: 'REAPPLY' });
    const refused = d.send({ type: 'APPLY_REFUSED', error: 'role "app" exists but is not managed by holdfast' });
    expect(refused).toMatchObject({ state: 'applyRefused', effects: [] });
    expect(refused.timer ?? null).toBeNull(); // nothing scheduled: no retry on a timer
    expect(refused.said).toEqual([
      {
        level: 'error',
        message:
          'apply refused by the backend (role "app" exists but is not managed by holdfast); not retried until the spec changes or someone asks (holdfast reapply)',
      },
    ]);
    expect(d.context.reason).toBe('apply refused: role "app" exists but is not managed by holdfast');
    expect(d.send({ type: 'CHECK_NOW' })).toMatchObject({ state: 'applyRefused', effects: [] });
    expect(d.send({ type: 'REAPPLY' })).toMatchObject({ state: 'applying', effects: ['apply'] });
    d.send({ type: 'APPLY_REFUSED', error: 'still' });
    expect(d.send({ type: 'DESIRED', specHash: 'spec-2' })).toMatchObject({ state: 'applying', effects: ['apply'] });
  });

  it('a consumer declared again while being removed is applied again', () => {
    const d = Driver.held();
    d.send({ type: 'REMOVE' }, { type: 'REMOVE_FAILED', error: 'x' });
    expect(d.send({ type: 'DESIRED', specHash: 'spec-1' })).toMatchObject({ state: 'applying', effects: ['apply'] });
  });
});

describe('quarantine: rules that keep being changed back', () => {
  // brake: 2v, 4v = brakeMax, brakeMax…; quarantined once it braked at brakeMax for two of them
  const quarantining = createConsumerMachine({ ...timing, brakeMaxMs: 240_000, quarantineAfterMs: 480_000 });
  const rulesDiffer: ConsumerEvent = { type: 'NOT_HELD', reason: 'rules-differ', detail: 'keys: the backend has "~*"' };

  /** Held, then re-applied `reapplies` times with the rules found differing after each. */
  function braked(reapplies: number, chart = quarantining): Driver {
    const d = Driver.held(chart);
    for (let i = 0; i < reapplies; i++)
      d.send(d.last.state === 'held' ? AFTER.verify('held') : AFTER.brake, rulesDiffer, applied);
    return d;
  }

  it('is off unless quarantineAfter is given: the brake goes on at its maximum', () => {
    const d = braked(12, machine);
    expect(d.send(AFTER.brake, rulesDiffer)).toMatchObject({ state: 'lost', effects: ['apply'] });
  });

  it('leaves a consumer whose rules still differ after braking at brakeMax for quarantineAfter unapplied, said once, with no wait', () => {
    const d = braked(3); // brakes waited: 2v, then brakeMax once
    expect(d.last.timer?.delay).toBe(240_000);
    expect(d.send(AFTER.brake, rulesDiffer).state).toBe('lost'); // braked at its maximum once: not yet
    d.send(applied);
    const quarantined = d.send(AFTER.brake, rulesDiffer);
    expect(quarantined).toMatchObject({ state: 'quarantined', effects: [], timer: undefined });
    expect(quarantined.said).toEqual([
      {
        level: 'error',
        message:
          'rules still differ after braking at brakeMax (4 min) for 8 min or more, 4 successful re-applies in all (rules-differ: keys: the backend has "~*"); ' +
          'something keeps changing them: quarantined, not applied again until someone acts (holdfast reapply, holdfast resume, or a changed spec)',
      },
    ]);
    expect(d.context.reason).toBe('quarantined: rules-differ: keys: the backend has "~*"');
    // nothing ends it by itself: no wait, the same spec ignored
    expect(d.send(AFTER.verify('held'), AFTER.brake, { type: 'DESIRED', specHash: 'spec-1' })).toMatchObject({
      state: 'quarantined',
      effects: [],
    });
  });

  it('is only for rules: a login missing at brakeMax is applied again', () => {
    const d = braked(4);
    expect(d.send(AFTER.brake, notHeld)).toMatchObject({ state: 'lost', effects: ['apply'] });
  });

  it('ends when someone acts: resumed, asked to apply or given a new spec, it is applied (resumed, its brake starts over); checked, it is asked', () => {
    const quarantined = () => {
      const d = braked(4);
      d.send(AFTER.brake, rulesDiffer);
      expect(d.last.state).toBe('quarantined');
      return d;
    };
    const resumed = quarantined();
    expect(resumed.send({ type: 'RESUME' })).toMatchObject({ state: 'applying', effects: ['apply'] });
    expect(resumed.context).toMatchObject({ brakeCount: 0, reason: 'resumed by an operator' });
    expect(resumed.send(applied, AFTER.verify('held'), rulesDiffer)).toMatchObject({
      state: 'lost',
      effects: ['apply'],
      said: [{ level: 'warn' }],
    });
    expect(quarantined().send({ type: 'REAPPLY' })).toMatchObject({ state: 'applying', effects: ['apply'] });
    expect(quarantined().send({ type: 'DESIRED', specHash: 'spec-2' })).toMatchObject({
      state: 'applying',
      effects: ['apply'],
    });
    const checked = quarantined();
    expect(checked.send({ type: 'CHECK_NOW' }, rulesDiffer).state).toBe('quarantined'); // still differing: left as it is
    expect(checked.send({ type: 'CHECK_NOW' }, { type: 'HELD' }).state).toBe('held');
    expect(quarantined().send({ type: 'REMOVE' })).toMatchObject({ state: 'removing', effects: ['remove'] });
  });
});

describe('recovery (rule 3)', () => {
  it('a record found mid-effect performs its effect again', () => {
    for (const [events, state, effect] of [
      [[{ type: 'DESIRED', specHash: 'spec-1' }], 'applying', 'apply'],
      [[{ type: 'DESIRED', specHash: 'spec-1' }, applied, AFTER.verify('held'), notHeld], 'lost', 'apply'],
      [[{ type: 'REMOVE' }], 'removing', 'remove'],
    ] as const) {
      const d = new Driver();
      d.send(...events);
      expect(d.last.state).toBe(state);
      const restored = machine.resolveState({ value: d.snapshot.value, context: d.snapshot.context });
      const [next, actions] = transition(machine, restored, { type: 'REDO' });
      expect(next.value).toBe(state);
      expect(actions.map((a) => a.type)).toContain(effect);
    }
  });
});

describe('delays', () => {
  it('brake doubles from twice the interval up to brakeMax; retries double up to the interval', () => {
    expect([2, 3, 4, 7, 8].map((n) => brakeDelay(n, timing))).toEqual([
      120_000, 240_000, 480_000, 3_600_000, 3_600_000,
    ]);
    expect([1, 2, 6, 7, 20].map((n) => retryDelay(n, timing))).toEqual([1000, 2000, 32_000, 60_000, 60_000]);
  });
});

describe('an operator suspends a consumer, and resumes it', () => {
  it('leaves it as it is: no check, no wait, no apply of a new spec, until resumed', () => {
    const d = Driver.held();
    const suspended = d.send({ type: 'SUSPEND' });
    expect(suspended).toMatchObject({ state: 'suspended', effects: [], timer: null, said: [] });
    expect(d.context.reason).toBe('suspended by an operator');
    expect(d.send(AFTER.verify('held'))).toMatchObject({ state: 'suspended', effects: [] }); // a wait that ends anyway
    expect(d.send({ type: 'CHECK_NOW' })).toMatchObject({ state: 'suspended', effects: [] });
    expect(d.send({ type: 'DESIRED', specHash: 'spec-2' })).toMatchObject({ state: 'suspended', effects: [] });
    // resumed: asked at once; the spec that changed meanwhile is then applied
    expect(d.send({ type: 'RESUME' })).toMatchObject({ state: 'checking', effects: ['check'] });
    expect(d.context.reason).toBe('resumed by an operator');
    expect(d.send({ type: 'CHANGED', what: 'spec changed since it was applied' })).toMatchObject({
      state: 'applying',
      effects: ['apply'],
    });
  });

  it('can be suspended while it waits to apply, and is removed when it is no longer declared', () => {
    const d = Driver.held();
    d.send({ type: 'REAPPLY' }, { type: 'APPLY_FAILED', error: 'e' });
    expect(d.send({ type: 'SUSPEND' })).toMatchObject({ state: 'suspended', timer: null });
    expect(d.send({ type: 'REMOVE' })).toMatchObject({ state: 'removing', effects: ['remove'] });
    expect(d.send({ type: 'SUSPEND' })).toMatchObject({ state: 'removing', effects: [] });
  });

  it('is not suspended before it was ever applied, nor while refused', () => {
    expect(new Driver().send({ type: 'SUSPEND' }).state).toBe('pending');
    const refused = new Driver();
    refused.send({ type: 'REJECT', problems: ['p'] });
    expect(refused.send({ type: 'SUSPEND' }).state).toBe('rejected');
  });
});

describe('generated paths', () => {
  it('reaches every state from the initial one', () => {
    const events: Array<ConsumerEvent | { type: string }> = [
      { type: 'DESIRED', specHash: 'spec-1' },
      { type: 'DESIRED', specHash: 'spec-2' },
      { type: 'REJECT', problems: ['p'] },
      { type: 'REMOVE' },
      { type: 'CHECK_NOW' },
      { type: 'REAPPLY' },
      { type: 'REDO' },
      { type: 'SUSPEND' },
      { type: 'RESUME' },
      applied,
      { type: 'APPLY_FAILED', error: 'e' },
      { type: 'HELD' },
      notHeld,
      { type: 'CHECK_FAILED', error: 'e', timedOut: true },
      { type: 'CHANGED', what: 'grant secret rotated' },
      { type: 'SECRET_MISSING', path: '/s' },
      { type: 'SECRET_UNREADABLE', detail: 'EACCES' },
      { type: 'SECRET_INVALID', detail: 'empty' },
      { type: 'NOT_APPLIED', reason: 'missing', detail: 'no such user' },
      { type: 'NOT_HELD', reason: 'rules-differ', detail: 'keys differ' },
      { type: 'REMOVED' },
      { type: 'REMOVE_FAILED', error: 'e' },
      { type: 'REMOVE_REFUSED', error: 'e' },
      { type: 'APPLY_REFUSED', error: 'e' },
      ...['held', 'couldNotAsk', 'blocked', 'observedNotHeld'].map(AFTER.verify),
      ...['retrying', 'removeRetrying'].map(AFTER.retry),
      AFTER.brake,
      AFTER.secretWait,
    ];
    // quarantined after one brake at brakeMax (2v): within the counts the paths tell apart
    const quarantining = createConsumerMachine({
      ...timing,
      brakeMaxMs: 2 * timing.verifyEveryMs,
      quarantineAfterMs: 0,
    });
    const paths = getShortestPaths(quarantining, {
      input: { key: 'cache/app-a' },
      events: events as ConsumerEvent[],
      // context counters bucketed so the state space stays finite
      serializeState: (s) =>
        JSON.stringify([
          s.value,
          Math.min(s.context.brakeCount, 3),
          Math.min(s.context.retryCount, 2),
          s.context.reapplying,
          Math.min(s.context.blockedRepeats, 2),
          s.context.appliedSpecHash,
        ]),
    });
    const reached = new Set(paths.map((p) => p.state.value as string));
    expect([...reached].sort()).toEqual([...CONSUMER_STATES].sort());
    expect(CONSUMER_STATES.size).toBe(19);
  });
});
