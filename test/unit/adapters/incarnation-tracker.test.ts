import { ObjectId } from 'mongodb';
import { describe, expect, it, vi } from 'vitest';
import type { IncarnationChange, NodeRun } from '../../../src/adapters/incarnation.js';
import { changeOf, IncarnationTracker, START_TOLERANCE_MS } from '../../../src/adapters/incarnation-tracker.js';
import { IncarnationWatch } from '../../../src/adapters/incarnation-watch.js';
import { runOfHello, runOfServerStatus } from '../../../src/adapters/mongodb-users/mongodb-run.js';
import { redisRunOf } from '../../../src/adapters/redis-acl/redis-run.js';

const A = 'a'.repeat(40);
const B = 'b'.repeat(40);

function tracked(): { tracker: IncarnationTracker; changes: IncarnationChange[] } {
  const tracker = new IncarnationTracker(() => 0);
  const changes: IncarnationChange[] = [];
  tracker.onIncarnation((c) => changes.push(c));
  return { tracker, changes };
}

describe('incarnation tracker', () => {
  it('a first read is the first incarnation, told to no one', () => {
    const { tracker, changes } = tracked();
    tracker.answered('n:1', { runId: A });
    expect(changes).toEqual([]);
    expect(tracker.incarnations().get('n:1')).toMatchObject({ runId: A, seq: 1 });
  });

  it('a node that joined the backend after its first read is told at its first read, once', () => {
    const { tracker, changes } = tracked();
    tracker.answered('n:1', { runId: A });
    tracker.joined('n:2');
    expect(changes).toEqual([]);
    tracker.answered('n:2', { runId: B });
    tracker.answered('n:2', { runId: B });
    expect(changes.map((c) => [c.node, c.why, c.current.runId, c.current.seq])).toEqual([['n:2', 'joined', B, 1]]);
    // a node already read is not one that joined
    tracker.joined('n:1');
    tracker.answered('n:1', { runId: A });
    expect(changes).toHaveLength(1);
  });

  it('a node that left the backend and is listed again is compared with its last run', () => {
    const { tracker, changes } = tracked();
    tracker.answered('n:1', { runId: A });
    tracker.answered('n:2', { runId: A });
    tracker.forget('n:1');
    tracker.forget('n:2');
    tracker.joined('n:1'); // listed again: not a node new to the backend
    tracker.answered('n:1', { runId: B });
    tracker.answered('n:2', { runId: A });
    expect(changes.map((c) => [c.node, c.why, c.current.seq])).toEqual([
      ['n:1', 'new-run-id', 2],
      ['n:2', 'answers-again', 2],
    ]);
    expect(changes[1]!.detail).toBe('answers again after not answering (left-the-backend)');
  });

  it('says when a node began holding none of its logins: a new run or a node joined, not a promotion or a silence', () => {
    let now = 1_000;
    const tracker = new IncarnationTracker(() => now);
    tracker.answered('n:1', { runId: A, role: 'replica' });
    tracker.answered('n:2', { runId: A });
    expect(tracker.incarnations().get('n:1')?.forgotAt).toBeUndefined();
    now = 2_000;
    tracker.answered('n:1', { runId: A, role: 'primary' }); // promoted: it kept what it held
    tracker.failed('n:2', 'ECONNRESET');
    tracker.answered('n:2', { runId: A }); // answers again, the same run
    expect(tracker.incarnations().get('n:1')?.forgotAt).toBeUndefined();
    expect(tracker.incarnations().get('n:2')?.forgotAt).toBeUndefined();
    now = 3_000;
    tracker.answered('n:2', { runId: B });
    tracker.joined('n:3');
    tracker.answered('n:3', { runId: B });
    now = 4_000;
    tracker.answered('n:2', { runId: B }); // the same run again: when it forgot is kept
    expect(tracker.incarnations().get('n:2')?.forgotAt).toBe(3_000);
    expect(tracker.incarnations().get('n:3')?.forgotAt).toBe(3_000);
  });

  it('another run id is new-run-id, told once, with both ids', () => {
    const { tracker, changes } = tracked();
    tracker.answered('n:1', { runId: A });
    tracker.answered('n:1', { runId: B });
    tracker.answered('n:1', { runId: B });
    expect(changes.map((c) => [c.why, c.previous.runId, c.current.runId, c.current.seq])).toEqual([
      ['new-run-id', A, B, 2],
    ]);
    expect(changes[0]!.detail).toBe(`run ${B} (was ${A})`);
  });

  it('the same run after not answering is answers-again; a new run after not answering is new-run-id', () => {
    const { tracker, changes } = tracked();
    tracker.answered('n:1', { runId: A });
    tracker.failed('n:1', 'BACKEND_UNAVAILABLE');
    tracker.failed('n:1', 'DEADLINE_EXCEEDED');
    tracker.answered('n:1', { runId: A });
    tracker.failed('n:1', 'BACKEND_UNAVAILABLE');
    tracker.answered('n:1', { runId: B });
    expect(changes.map((c) => c.why)).toEqual(['answers-again', 'new-run-id']);
    expect(changes[0]!.detail).toBe('answers again after not answering (BACKEND_UNAVAILABLE)');
  });

  it('a restarted node that cannot say its run at first (INFO refused): answers-again, then new-run-id once it can', () => {
    const { tracker, changes } = tracked();
    tracker.answered('n:1', { runId: A });
    tracker.failed('n:1', 'BACKEND_UNAVAILABLE');
    tracker.answered('n:1', {});
    tracker.answered('n:1', { runId: B });
    tracker.answered('n:1', { runId: B });
    expect(changes.map((c) => [c.why, c.previous.runId, c.current.runId])).toEqual([
      ['answers-again', A, A],
      ['new-run-id', A, B],
    ]);
  });

  it('a server that names no run: only its answering again', () => {
    const { tracker, changes } = tracked();
    tracker.answered('s3:1', {});
    tracker.answered('s3:1', {});
    tracker.failed('s3:1', 'BACKEND_UNAVAILABLE');
    tracker.answered('s3:1', {});
    expect(changes.map((c) => [c.why, c.current.seq])).toEqual([['answers-again', 2]]);
  });

  it('kinds, strongest first: new-system-id, new-run-id, promoted, answers-again', () => {
    const was = { runId: A, systemId: '1', role: 'replica' as const };
    expect(changeOf(was, { runId: B, systemId: '2', role: 'primary' }, true)).toBe('new-system-id');
    expect(changeOf(was, { runId: B, systemId: '1', role: 'primary' }, true)).toBe('new-run-id');
    expect(changeOf(was, { runId: A, systemId: '1', role: 'primary' }, true)).toBe('promoted');
    expect(changeOf(was, { runId: A, systemId: '1', role: 'replica' }, true)).toBe('answers-again');
    expect(changeOf(was, { runId: A, systemId: '1', role: 'replica' }, false)).toBeUndefined();
    // a read that lacks an id (INFO refused) is no new run
    expect(changeOf(was, { role: 'replica' }, false)).toBeUndefined();
    // a primary stepping down is no new incarnation (what it held stays)
    expect(changeOf({ runId: A, role: 'primary' }, { runId: A, role: 'replica' }, false)).toBeUndefined();
  });

  it('start times from uptimes: the same run within the tolerance, another beyond it', () => {
    expect(changeOf({ runId: 'pid 1', startedAt: 1_000 }, { runId: 'pid 1', startedAt: 1_007 }, false)).toBeUndefined();
    expect(
      changeOf({ runId: 'pid 1', startedAt: 1_000 }, { runId: 'pid 1', startedAt: 1_001 + START_TOLERANCE_MS }, false),
    ).toBe('new-run-id');
  });
});

describe('incarnation watch', () => {
  it('sends nothing until asked; a read that never answers passes its deadline, and the next answer is answers-again', async () => {
    let hang = false;
    let reads = 0;
    const watch = new IncarnationWatch({
      everyMs: 20,
      timeoutMs: 50,
      nodes: () => ['n:1'],
      read: () => {
        reads++;
        return hang ? new Promise(() => undefined) : Promise.resolve({});
      },
    });
    await new Promise((r) => setTimeout(r, 60));
    expect(reads).toBe(0);
    const changes: IncarnationChange[] = [];
    watch.onIncarnation((c) => changes.push(c));
    await waitUntil(() => watch.incarnations().has('n:1'));
    hang = true;
    await new Promise((r) => setTimeout(r, 120));
    hang = false;
    await waitUntil(() => changes.length > 0);
    watch.close();
    expect(changes.map((c) => [c.why, c.detail])).toEqual([
      ['answers-again', 'answers again after not answering (DEADLINE_EXCEEDED)'],
    ]);
  });

  it('reads a node that did not answer again soon, not at the next tick: a server back as another run is seen at once', async () => {
    vi.useFakeTimers();
    try {
      const runs: Array<() => Promise<NodeRun>> = [
        () => Promise.resolve({ runId: A }),
        () => Promise.reject(new Error('refused')),
        () => Promise.resolve({ runId: B }),
      ];
      let reads = 0;
      const watch = new IncarnationWatch({
        everyMs: 60_000,
        timeoutMs: 1_000,
        failingEveryMs: 200,
        nodes: () => ['n:1'],
        read: () => runs[Math.min(reads++, runs.length - 1)]!(),
      });
      const changes: IncarnationChange[] = [];
      watch.onIncarnation((c) => changes.push(c));
      await vi.advanceTimersByTimeAsync(0);
      watch.readNow(); // a connection made again, say: the server does not answer yet
      await vi.advanceTimersByTimeAsync(0);
      expect(reads).toBe(2);
      // a fifth of a second later, not a minute: it answers, as another run
      await vi.advanceTimersByTimeAsync(200);
      expect(reads).toBe(3);
      expect(changes.map((c) => [c.why, c.current.runId])).toEqual([['new-run-id', B]]);
      watch.close();
    } finally {
      vi.useRealTimers();
    }
  });
});

async function waitUntil(done: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !done(); i++) await new Promise((r) => setTimeout(r, 10));
  expect(done()).toBe(true);
}

describe('what each server says of its run', () => {
  it('Redis: INFO server run_id, and the role discovery found', () => {
    const info = `# Server\r\nredis_version:7.0.15\r\nprocess_id:42\r\nrun_id:${A}\r\ntcp_port:6379\r\n`;
    expect(redisRunOf(info, 'master')).toEqual({ runId: A, role: 'primary' });
    expect(redisRunOf(info, 'node')).toEqual({ runId: A });
    expect(redisRunOf('', 'replica')).toEqual({ role: 'replica' });
  });

  it('mongod: hello topologyVersion.processId; FerretDB: serverStatus pid and the start its uptime tells', () => {
    const processId = new ObjectId();
    expect(runOfHello({ isWritablePrimary: true, topologyVersion: { processId, counter: 0 } })).toEqual({
      runId: `process ${processId.toHexString()}`,
      role: 'primary',
    });
    expect(runOfHello({ isWritablePrimary: true, ok: 1 })).toBeUndefined();
    const localTime = new Date('2026-12-07T10:39:09.269Z');
    expect(runOfServerStatus({ pid: 10742, uptimeMillis: 8137, localTime })).toEqual({
      runId: 'pid 10742',
      startedAt: localTime.getTime() - 8137,
    });
  });
});
