/**
 * MongoDB wire servers (FerretDB among them) refuse document keys that contain `.` or start
 * with `$`; XState snapshots and adapter values may hold such keys. Keys are percent-encoded
 * on the way in (`%` → `%25`, `.` → `%2E`, a leading `$` → `%24`) and decoded on the way out.
 */
type Json = null | boolean | number | string | Date | Json[] | { [key: string]: Json };

function encodeKey(key: string): string {
  return key.replace(/%/g, '%25').replace(/\./g, '%2E').replace(/^\$/, '%24');
}

const DECODED: Record<string, string> = { '%25': '%', '%2E': '.', '%24': '$' };

function decodeKey(key: string): string {
  return key.replace(/%25|%2E|^%24/g, (escape) => DECODED[escape] ?? escape);
}

function mapKeys(value: unknown, map: (key: string) => string): unknown {
  if (Array.isArray(value)) return value.map((item) => mapKeys(item, map));
  if (value !== null && typeof value === 'object' && !(value instanceof Date)) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [map(k), mapKeys(v, map)]));
  }
  return value;
}

export function encodeKeys<T>(value: T): Json {
  return mapKeys(value, encodeKey) as Json;
}

export function decodeKeys<T>(value: unknown): T {
  return mapKeys(value, decodeKey) as T;
}
