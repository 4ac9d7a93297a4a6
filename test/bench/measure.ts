/**
 * What the benchmark reads off the servers: Redis's own command statistics and CPU time, and the lateness of checks.
 */
import { readFileSync } from 'node:fs';
import type { Redis } from 'ioredis';
import { verifyDelay } from '../../machines/delays.js';
import type { Timing } from '../../src/config/config.js';
import type { MemoReads } from '../../src/queue/coordination.js';

export interface RedisCost {
  /** Calls per command (`auth`, `acl|getuser`…). */
  calls: Map<string, number>;
  /** Microseconds spent per command. */
  usec: Map<string, number>;
  /** Microseconds the server spent executing all commands. */
  commandUs: number;
  /** Microseconds of CPU the server process used (commands, network, everything). */
  cpuUs: number;
}

export async function redisCost(redis: Redis): Promise<RedisCost> {
  const [stats, cpu] = await Promise.all([redis.info('commandstats'), redis.info('cpu')]);
  const calls = new Map<string, number>();
  const usec = new Map<string, number>();
  let commandUs = 0;
  for (const match of stats.matchAll(/^cmdstat_([^:]+):calls=(\d+),usec=(\d+)/gm)) {
    calls.set(match[1]!, Number(match[2]));
    usec.set(match[1]!, Number(match[3]));
    commandUs += Number(match[3]);
  }
  const field = (name: string) => Number(new RegExp(`^${name}:([\\d.]+)`, 'm').exec(cpu)?.[1] ?? 0);
  return { calls, usec, commandUs, cpuUs: Math.round((field('used_cpu_sys') + field('used_cpu_user')) * 1e6) };
}

export function costBetween(before: RedisCost, after: RedisCost): RedisCost {
  const calls = new Map<string, number>();
  const usec = new Map<string, number>();
  for (const [name, n] of after.calls) calls.set(name, n - (before.calls.get(name) ?? 0));
  for (const [name, n] of after.usec) usec.set(name, n - (before.usec.get(name) ?? 0));
  return { calls, usec, commandUs: after.commandUs - before.commandUs, cpuUs: after.cpuUs - before.cpuUs };
}

/** The costs of several servers (the nodes of one backend) as one: calls, µs and CPU summed. */
export function sumCosts(costs: readonly RedisCost[]): RedisCost {
  const calls = new Map<string, number>();
  const usec = new Map<string, number>();
  for (const cost of costs) {
    for (const [name, n] of cost.calls) calls.set(name, (calls.get(name) ?? 0) + n);
    for (const [name, n] of cost.usec) usec.set(name, (usec.get(name) ?? 0) + n);
  }
  return {
    calls,
    usec,
    commandUs: costs.reduce((a, c) => a + c.commandUs, 0),
    cpuUs: costs.reduce((a, c) => a + c.cpuUs, 0),
  };
}

/** Calls and microseconds per call of each command that ran. */
export function perCommand(cost: RedisCost): Record<string, { calls: number; usPerCall: number }> {
  const out: Record<string, { calls: number; usPerCall: number }> = {};
  for (const [name, calls] of cost.calls)
    if (calls > 0) out[name] = { calls, usPerCall: Math.round(((cost.usec.get(name) ?? 0) / calls) * 100) / 100 };
  return out;
}

/** Checks the cache answered: light (`AUTH`) and deep (`ACL GETUSER`). */
export function checksIn(cost: RedisCost): { light: number; deep: number } {
  return { light: cost.calls.get('auth') ?? 0, deep: cost.calls.get('acl|getuser') ?? 0 };
}

export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/**
 * How late checks come: for a sample of consumers, the gap between two checks they finished
 * (read from what the queue's Redis remembers of each), less the wait they asked for. It
 * counts queueing and the check itself.
 */
export class LatenessSampler {
  private readonly last = new Map<string, number>();
  readonly lateMs: number[] = [];
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly coordination: { readonly locks: MemoReads },
    private readonly keys: readonly string[],
    private readonly timing: Timing,
  ) {}

  start(everyMs = 250): void {
    this.timer = setInterval(() => void this.poll(), everyMs);
  }

  stop(): void {
    clearInterval(this.timer);
  }

  private async poll(): Promise<void> {
    const memos = await this.coordination.locks.checkMemos(this.keys).catch(() => new Map<string, { at: number }>());
    this.keys.forEach((key) => {
      const at = memos.get(key)?.at;
      if (at === undefined) return;
      const previous = this.last.get(key);
      this.last.set(key, at);
      if (previous !== undefined && at > previous)
        this.lateMs.push(Math.max(0, at - previous - verifyDelay(key, this.timing)));
    });
  }
}

/**
 * CPU milliseconds each process has used so far, by label (`/proc/<pid>/stat`: utime + stime, in clock ticks of 10 ms).
 */
export function processCpuMs(pids: ReadonlyMap<string, number>): Map<string, number> {
  const used = new Map<string, number>();
  for (const [label, pid] of pids) {
    try {
      // the fields after the command's closing parenthesis: state is the 3rd, utime the 14th, stime the 15th
      const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
      used.set(label, (Number(fields[11]) + Number(fields[12])) * 10);
    } catch {
      used.set(label, NaN);
    }
  }
  return used;
}

/**
 * Resident memory of each process, by label, in MB: now (`VmRSS`) and at its highest (`VmHWM`), from
 * `/proc/<pid>/status`.
 */
export function processMemoryMb(pids: ReadonlyMap<string, number>): Map<string, { rss: number; peak: number }> {
  const memory = new Map<string, { rss: number; peak: number }>();
  for (const [label, pid] of pids) {
    try {
      const status = readFileSync(`/proc/${pid}/status`, 'utf8');
      const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
      memory.set(label, { rss: Math.round(kb('VmRSS') / 1024), peak: Math.round(kb('VmHWM') / 1024) });
    } catch {
      memory.set(label, { rss: NaN, peak: NaN });
    }
  }
  return memory;
}
