/**
 * The consumer machine's diagram in `docs/architecture.md` is generated from the machine
 * (`scripts/machine-diagram.ts`): it fails here when the copy differs from what the machine
 * gives now, so the diagram cannot drift from the chart.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { createMachine } from 'xstate';
import { describe, expect, it } from 'vitest';
import { CHART, CONSUMER_STATES } from '../../../machines/consumer-machine.js';
import { diagramBlock, diagramIn, DIAGRAM_DOC, machineDiagram } from '../../../scripts/machine-diagram.js';

const root = resolve(import.meta.dirname, '../../..');

describe('the machine diagram', () => {
  it(`in ${DIAGRAM_DOC} is the one the machine gives (regenerate: npx tsx scripts/machine-diagram.ts --write)`, () => {
    const doc = readFileSync(resolve(root, DIAGRAM_DOC), 'utf8');
    expect(diagramIn(doc)).toBe(diagramBlock());
  });

  it('draws every state of the chart, the initial one, the final one and the waits by name', () => {
    const diagram = machineDiagram();
    for (const state of CONSUMER_STATES)
      expect(diagram).toMatch(new RegExp(`^  (?:${state} -->|.* --> ${state} :)`, 'm'));
    expect(diagram).toContain('[*] --> pending');
    expect(diagram).toContain('removed --> [*]');
    expect(diagram).toContain('held --> checking : CHECK_NOW, after verify');
    expect(diagram).toContain('checking --> quarantined : NOT_HELD [quarantine]');
    expect(diagram).toContain('anyState --> removing : REMOVE');
  });

  it('does not depend on the order the chart is written in', () => {
    const reversed = <T extends object>(o: T): T => Object.fromEntries(Object.entries(o).reverse()) as T;
    const { states, on, ...rest } = CHART.config as { states: Record<string, { on?: object }>; on: object };
    const reordered = Object.fromEntries(
      Object.entries(states)
        .reverse()
        .map(([name, state]) => [name, state.on ? { ...state, on: reversed(state.on) } : state]),
    );
    expect(machineDiagram(createMachine({ ...rest, on: reversed(on), states: reordered } as never) as never)).toBe(
      machineDiagram(),
    );
  });
});
