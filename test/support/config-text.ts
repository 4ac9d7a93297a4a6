/** A holdfast.yaml as text, for the config loader's unit tests: the queue and store, then provider entries. */

/** The queue and store every test file names, and the `providers:` key its entries follow. */
export const CONFIG_HEAD = `queue:
  url: redis://127.0.0.1:6379
store:
  url: mongodb://127.0.0.1:27017
providers:
`;

/** A provider entry: its name, adapter, admin (a flow mapping) and more lines. */
export function providerEntry(name: string, adapter: string, admin: string, ...more: string[]): string {
  return [
    `  - name: ${name}`,
    `    adapter: ${adapter}`,
    `    admin: ${admin}`,
    `    contributions: ${name}.yaml`,
    ...more.map((l) => `    ${l}`),
  ].join('\n');
}
