/**
 * What a worker takes on a job's word only when holdfast wrote it. Anyone who can write the
 * queue's Redis (or use Bull Board's add and update-data) can add jobs; none of them may widen a
 * right:
 *
 * - a `desired` job must carry the seal of its spec (`src/queue/job-seal.ts`), or it is dropped:
 *   nothing it says reaches the record or the backend;
 * - a wait job's ticket must carry its seal, or it is not used: the job goes by the record,
 *   like any wait whose ticket is not current;
 * - a command job may carry only an event a command sends (`check`, `reapply`, `suspend`,
 *   `resume`), acting on the spec the record holds; anything else is dropped;
 * - a redo job carries a revision only, and redoes what the record says.
 *
 * Each is counted (`holdfast_jobs_rejected_total{reason}`) and said once per process and reason.
 */
import type { Logger } from '../src/logging/logger.js';
import type { WorkObserver } from '../src/metrics/metrics.js';
import { JOB_COMMANDS, type ConsumerJobData } from '../src/schedule/consumer-queue.js';
import type { JobSeal } from '../src/queue/job-seal.js';

/** How far a worker trusts a job: whole, all but its ticket, or not at all. */
export type Trust = 'whole' | 'not-its-ticket' | 'none';

type Reason = 'desired-not-sealed' | 'ticket-not-sealed' | 'not-a-holdfast-job';

const COMMANDS: ReadonlySet<string> = new Set(JOB_COMMANDS);

export class JobTrust {
  private readonly said = new Set<Reason>();
  /**
   * Wait jobs whose ticket's seal was found good, when the job is frozen (a wait known again by its stored text,
   * `src/schedule/known-waits.ts`, hands out the same frozen job for the same text): a seal is a function of what the
   * job says and of this process's key, and a frozen job cannot come to say anything else, so its seal is checked once
   * per distinct sealed ticket, not at every routine check. Weak: a job let go is forgotten with it.
   */
  private readonly sealed = new WeakSet<object>();

  constructor(
    private readonly seal: JobSeal,
    private readonly logger: Logger,
    private readonly observer?: Pick<WorkObserver, 'jobRejected'>,
  ) {}

  judge(job: ConsumerJobData): Trust {
    if (typeof job.key !== 'string' || !job.key.includes('/'))
      return this.reject(job, 'not-a-holdfast-job', 'it names no consumer (<provider>/<id>): dropped');
    switch (job.kind) {
      case 'desired':
        return this.seal.sealsDesired(job)
          ? 'whole'
          : this.reject(
              job,
              'desired-not-sealed',
              'its desired spec is not sealed by holdfast: dropped, nothing of it applied',
            );
      case 'wait':
        return this.sealsTicket(job)
          ? 'whole'
          : this.reject(
              job,
              'ticket-not-sealed',
              "its ticket is not sealed by holdfast: not used, the consumer's record is read instead",
            );
      case 'command':
        return COMMANDS.has((job.event as { type?: unknown } | null)?.type as string)
          ? 'whole'
          : this.reject(
              job,
              'not-a-holdfast-job',
              `it asks for an event no command sends (${JSON.stringify((job.event as { type?: unknown } | null)?.type ?? null)}): dropped`,
            );
      case 'redo':
        return 'whole';
      default:
        return this.reject(job, 'not-a-holdfast-job', 'it is of no kind holdfast makes: dropped');
    }
  }

  private sealsTicket(job: Extract<ConsumerJobData, { kind: 'wait' }>): boolean {
    if (this.sealed.has(job)) return true;
    if (!this.seal.sealsTicket(job)) return false;
    if (Object.isFrozen(job) && Object.isFrozen(job.ticket)) this.sealed.add(job);
    return true;
  }

  private reject(job: ConsumerJobData, reason: Reason, what: string): Trust {
    this.observer?.jobRejected(reason);
    if (!this.said.has(reason)) {
      this.said.add(reason);
      const consumer = String(job.key).slice(0, 200);
      this.logger.error(
        { consumer, reason },
        `a job for ${consumer} was not written by holdfast (added to the queue's Redis by hand, through Bull Board, or by a holdfast with another fingerprint key): ` +
          `${what}; more like it are counted (holdfast_jobs_rejected_total{reason="${reason}"}), not said`,
      );
    }
    return reason === 'ticket-not-sealed' ? 'not-its-ticket' : 'none';
  }
}
