import { setup, transition, initialTransition, assign } from 'xstate';
const m = setup({
  types: { context: {} as { n: number; id: string }, events: {} as { type: 'GO' } | { type: 'DONE' }, input: {} as { id: string } },
  delays: { verifyDelay: ({ context }) => 1000 * (context.n + 1) },
  actions: { apply: () => {}, check: () => {} },
}).createMachine({
  id: 'c', context: ({ input }) => ({ n: 0, id: input.id }), initial: 'pending',
  states: {
    pending: { on: { GO: 'applying' } },
    applying: { entry: 'apply', on: { DONE: { target: 'held', actions: assign({ n: ({ context }) => context.n + 1 }) } } },
    held: { after: { verifyDelay: 'verifying' } },
    verifying: { entry: 'check', on: { DONE: 'held' } },
  },
});
let [s, a] = initialTransition(m, { id: 'x' });
console.log(s.value, a);
[s, a] = transition(m, s, { type: 'GO' }); console.log(s.value, JSON.stringify(a));
[s, a] = transition(m, s, { type: 'DONE' }); console.log(s.value, JSON.stringify(a, null, 0));
const persisted = m.getPersistedSnapshot(s); console.log(JSON.stringify(persisted));
const restored = m.resolveState({ value: 'held', context: (persisted as any).context });
const ev = (a.find((x: any) => x.type === 'xstate.raise') as any).params.event;
[s, a] = transition(m, restored, ev); console.log(s.value, JSON.stringify(a));
