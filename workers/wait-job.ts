/** A wait's job: a consumer's wait ended, carrying the ticket of its record at the wait's revision. */
import type { ConsumerJobData } from '../src/schedule/consumer-queue.js';

export type WaitJob = Extract<ConsumerJobData, { kind: 'wait' }>;
