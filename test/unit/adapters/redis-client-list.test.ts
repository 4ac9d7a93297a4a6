/** `CLIENT LIST` read for the connections of some logins: who, from where, since when; holdfast's own left out. */
import { describe, expect, it } from 'vitest';
import { clientAddress, sessionsOfClientList } from '../../../src/adapters/redis-acl/client-list.js';

const line = (id: number, addr: string, age: number, user: string, name = '') =>
  `id=${id} addr=${addr} laddr=127.0.0.1:6379 fd=8 name=${name} age=${age} idle=0 flags=N db=0 sub=0 psub=0 ssub=0 multi=-1 qbuf=0 qbuf-free=0 argv-mem=0 multi-mem=0 rbs=1024 rbp=0 obl=0 oll=0 omem=0 tot-mem=1800 events=r cmd=get user=${user} redir=-1 resp=2`;

describe('sessionsOfClientList', () => {
  const now = 1_000_000_000_000;
  const reply = [
    line(4, '10.0.0.7:5123', 30, 'app_photos'),
    line(5, '10.0.0.8:6001', 2, 'app_photos', 'worker'),
    line(6, '10.0.0.9:7000', 99, 'app_other'),
    line(7, '127.0.0.1:40000', 500, 'app_photos'),
    line(8, '10.0.0.1:1', 5, 'default'),
    '',
  ].join('\n');

  it("keeps the asked logins' connections, each with its address and the latest it can have begun (age: whole seconds)", () => {
    expect(sessionsOfClientList(reply, new Set(['app_photos']), now, new Set(['127.0.0.1:40000']))).toEqual([
      { login: 'app_photos', address: '10.0.0.7:5123', startedAt: now - 29_000 },
      { login: 'app_photos', address: '10.0.0.8:6001', startedAt: now - 1_000 },
    ]);
  });

  it("leaves out holdfast's own connection only by its exact address", () => {
    const all = sessionsOfClientList(reply, new Set(['app_photos', 'app_other']), now);
    expect(all.map((s) => s.address)).toEqual(['10.0.0.7:5123', '10.0.0.8:6001', '10.0.0.9:7000', '127.0.0.1:40000']);
  });

  it('names a socket as Redis names its client', () => {
    expect(clientAddress('::ffff:127.0.0.1', 40000)).toBe('127.0.0.1:40000');
    expect(clientAddress(undefined, 1)).toBeUndefined();
  });
});
