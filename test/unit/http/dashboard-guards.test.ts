import { describe, expect, it } from 'vitest';
import { basicAuthChecker } from '../../../src/http/basic-auth.js';
import { hostMatcher } from '../../../src/http/host-check.js';
import { isLoopback, refuseExposedDashboard } from '../../../src/http/listen-guard.js';

describe('the Host names the dashboard answers to', () => {
  it('on loopback: its address and the loopback names, with its port', () => {
    const known = hostMatcher('127.0.0.1', 9100, []);
    for (const host of ['127.0.0.1:9100', 'localhost:9100', 'LOCALHOST:9100', '[::1]:9100'])
      expect(known(host), host).toBe(true);
    for (const host of [
      undefined,
      '',
      'evil.example:9100',
      'evil.example',
      '127.0.0.1:9101',
      '127.0.0.1',
      'localhost.evil.example:9100',
      '127.0.0.1:9100:1',
    ]) {
      expect(known(host), String(host)).toBe(false);
    }
  });

  it('on every address: the loopback names only, unless http.hosts names more; a name alone accepts any port', () => {
    const known = hostMatcher('0.0.0.0', 9100, ['holdfast.example.com', '192.0.2.7:80', '[2001:db8::1]:9100']);
    for (const host of [
      '127.0.0.1:9100',
      'holdfast.example.com',
      'holdfast.example.com:443',
      '192.0.2.7',
      '[2001:db8::1]:9100',
    ])
      expect(known(host), host).toBe(true);
    for (const host of ['0.0.0.0:9100', '192.0.2.7:9100', 'example.com', '[2001:db8::1]'])
      expect(known(host), host).toBe(false);
  });

  it('on an address of the machine: that address with its port', () => {
    const known = hostMatcher('192.0.2.7', 9100, []);
    expect(known('192.0.2.7:9100')).toBe(true);
    expect(known('127.0.0.1:9100')).toBe(false);
  });
});

describe('where the dashboard may listen without a password', () => {
  it('loopback only', () => {
    for (const host of ['127.0.0.1', '127.1.2.3', 'localhost', '::1']) expect(isLoopback(host), host).toBe(true);
    for (const host of ['0.0.0.0', '::', '192.0.2.7', 'holdfast.example.com', '::ffff:127.0.0.1'])
      expect(isLoopback(host), host).toBe(false);
    expect(() => refuseExposedDashboard({ host: '::', port: 9100 }, undefined)).toThrow(
      'the dashboard would listen on [::]:9100, which is not a loopback address, with no password: set http.passwordFile',
    );
    expect(() =>
      refuseExposedDashboard({ host: '::', port: 9100 }, { username: 'holdfast', password: 'long-enough' }),
    ).not.toThrow();
    expect(() => refuseExposedDashboard({ host: '127.0.0.1', port: 9100 }, undefined)).not.toThrow();
  });
});

describe('basic auth', () => {
  const check = basicAuthChecker({ username: 'holdfast', password: 'board-pw-long' });
  const header = (text: string) => `Basic ${Buffer.from(text).toString('base64')}`;
  it('passes the right pair only', () => {
    expect(check(header('holdfast:board-pw-long'))).toBe(true);
    expect(check(`basic ${Buffer.from('holdfast:board-pw-long').toString('base64')}`)).toBe(true);
    for (const given of [
      'holdfasx:board-pw-long',
      'holdfast:board-pw-lonG',
      'holdfast:board-pw-lon',
      'holdfast:board-pw-long:',
      ':board-pw-long',
      'holdfast',
      '',
    ]) {
      expect(check(header(given)), given).toBe(false);
    }
    expect(check(undefined)).toBe(false);
    expect(check('Bearer abc')).toBe(false);
  });
});
