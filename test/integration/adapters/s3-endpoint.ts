/** Until the harness starts SeaweedFS: a hand-started server named by HOLDFAST_DEV_S3 (JSON url/user/secret). */
export function s3Endpoint(): { url: string; admin: { username: string; password: string } } {
  // eslint-disable-next-line no-restricted-properties -- a stop-gap until the harness's sharedBackend('s3') lands
  const raw = process.env['HOLDFAST_DEV_S3'];
  if (raw === undefined) throw new Error('HOLDFAST_DEV_S3 is not set');
  return JSON.parse(raw) as { url: string; admin: { username: string; password: string } };
}
