/** A job's data as this release reads it: a wait job of the previous release's kind is a wait job. */
import { describe, expect, it } from 'vitest';
import type { ConsumerJobData } from '../../../src/schedule/consumer-queue.js';
import { jobDataOf } from '../../../src/schedule/job-data.js';

const wait = {
  key: 'cache/photos',
  kind: 'wait',
  rev: 3,
  wait: 'verify',
  ticket: { machine: { version: 2, state: 'held', context: { key: 'cache/photos' } }, spec: {}, appliedAt: null },
  seal: 'the-seal',
} as unknown as ConsumerJobData;

describe("a job's data", () => {
  it('reads a wait job the previous release queued under its former kind as a wait job, all else as it was', () => {
    const former = { ...wait, kind: 'timer' } as unknown as ConsumerJobData; // the former kind
    expect(jobDataOf(former)).toEqual(wait);
    expect(former).toMatchObject({ kind: 'timer' }); // the job as BullMQ gave it is left alone (former kind)
  });

  it("returns this release's jobs, and what is no job of holdfast's, unchanged (the trust judges those)", () => {
    const command = { key: 'cache/photos', kind: 'command', event: { type: 'CHECK_NOW' } } as ConsumerJobData;
    const strange = { key: 'cache/photos', kind: 'constructor' } as unknown as ConsumerJobData;
    for (const job of [wait, command, strange]) expect(jobDataOf(job)).toBe(job);
    expect(jobDataOf(null as unknown as ConsumerJobData)).toBeNull();
  });
});
