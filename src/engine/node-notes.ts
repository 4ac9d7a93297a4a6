/**
 * A worker notes each provider's backend nodes in the queue's Redis, for `holdfast status`
 * (another process, which holds no admin connection): every {@link NOTE_EVERY_MS} and at once
 * when a node event is said (one stops answering, answers again, a failover). One small string
 * per provider of several nodes, kept {@link NOTE_TTL_MS}: a worker that stops leaves no stale
 * nodes behind (its silence is said by the status already). Several workers note the same key;
 * the last one's view stands, except a larger count of the consumers a node lacks that another
 * worker noted lately (each worker counts the consumers it checked: `nodes-note-merge.ts`).
 */
import { randomBytes } from 'node:crypto';
import type { Adapter } from '../adapters/adapter.js';
import type { Logger } from '../logging/logger.js';
import type { NodeNotes } from '../queue/coordination.js';

/** How often a worker notes its providers' nodes. */
export const NOTE_EVERY_MS = 2_000;
/** How long a note is kept without being noted again. */
export const NOTE_TTL_MS = 10_000;

export interface NodeNoterOptions {
  providers: ReadonlyArray<{ name: string; adapter: Pick<Adapter, 'nodeReport' | 'onNodeEvent'> }>;
  notes: NodeNotes;
  logger: Pick<Logger, 'warn'>;
  now?: () => Date;
  everyMs?: number;
  /** This worker's id in its notes (default a random one per process). */
  by?: string;
}

/** Starts noting; returns the stop. */
export function startNodeNotes({
  providers,
  notes,
  logger,
  now = () => new Date(),
  everyMs = NOTE_EVERY_MS,
  by = randomBytes(6).toString('hex'),
}: NodeNoterOptions): () => void {
  const several = providers.filter((p) => p.adapter.nodeReport !== undefined);
  let warned = false;
  const note = (name: string, adapter: (typeof several)[number]['adapter']): void => {
    const nodes = adapter.nodeReport!();
    notes.setNodes(name, { at: now().toISOString(), nodes, by }, NOTE_TTL_MS).catch((error: unknown) => {
      if (warned) return;
      warned = true;
      logger.warn(
        { provider: name },
        `the backend nodes could not be noted for the status: ${error instanceof Error ? error.message : String(error)}`,
      );
    });
  };
  const all = (): void => several.forEach((p) => note(p.name, p.adapter));
  const timer = setInterval(all, everyMs);
  timer.unref();
  const unsubscribe = several.map((p) => p.adapter.onNodeEvent?.(() => note(p.name, p.adapter)));
  all();
  return () => {
    clearInterval(timer);
    for (const stop of unsubscribe) stop?.();
  };
}
