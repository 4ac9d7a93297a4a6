/** The job id of a consumer's wait at `epoch`: what the queue and the status both name it by. */
export function waitJobId(key: string, epoch: number): string {
  return `${key}@${epoch}`;
}
