/** The job id of a consumer's wait at `rev`: what the queue and the status both name it by. */
export function waitJobId(key: string, rev: number): string {
  return `${key}@${rev}`;
}
