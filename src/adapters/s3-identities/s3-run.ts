/**
 * A SeaweedFS S3 gateway's incarnation: it says nothing that identifies a run (no start time, no
 * id on `/status`), so only its answering again after not answering (refused, reset, timed out, a
 * 5xx) is seen. Read as one unsigned `GET /status` on the S3 port (no credentials sent, nothing
 * written), bounded by the read's signal.
 */
import { HoldfastError } from '../../errors/holdfast-error.js';
import type { NodeRun } from '../incarnation.js';

/** Whether the gateway at `base` answers; a run with no identity when it does. */
export async function readS3Run(base: string, signal: AbortSignal): Promise<NodeRun> {
  let status: number;
  try {
    const response = await fetch(new URL('/status', base), { signal, redirect: 'manual' });
    status = response.status;
    await response.body?.cancel();
  } catch (error) {
    const code = (error as { cause?: { code?: unknown } } | null)?.cause?.code;
    throw new HoldfastError(
      'BACKEND_UNAVAILABLE',
      `s3-identities: the gateway did not answer (${typeof code === 'string' ? code : 'no answer'})`,
    );
  }
  if (status >= 500) throw new HoldfastError('BACKEND_UNAVAILABLE', `s3-identities: the gateway answered ${status}`);
  return {};
}
