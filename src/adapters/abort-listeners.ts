/**
 * Listeners of a signal many calls share, in constant time each. The calls of one turn share one
 * deadline signal (`workers/turn-deadline.ts`): a heal's burst hangs thousands of listeners on it (each
 * call's race, each wait for a call slot, each batched call). `EventTarget.addEventListener` walks
 * every listener already added to find a duplicate, and `removeEventListener` walks them to find
 * its own, so n listeners cost n² steps: 6.7 % of a heal's CPU in the effects and the adapter for
 * 2,000 heals begun together (`test/bench/heal-calls.ts`). Here each signal gets one listener of its
 * own, which calls the callbacks added through {@link onAbort}, each once.
 */

type Callbacks = Set<() => void>;

const listening = new WeakMap<AbortSignal, Callbacks>();

/**
 * Calls `callback` once when `signal` aborts (at once, in this turn, when it already has); returns what stops it from
 * being called. Each signal gets one listener of its own however many callbacks are added.
 */
export function onAbort(signal: AbortSignal, callback: () => void): () => void {
  if (signal.aborted) {
    callback();
    return () => undefined;
  }
  let callbacks = listening.get(signal);
  if (callbacks === undefined) {
    const added: Callbacks = new Set();
    callbacks = added;
    listening.set(signal, added);
    signal.addEventListener(
      'abort',
      () => {
        listening.delete(signal);
        for (const call of added) call();
        added.clear();
      },
      { once: true },
    );
  }
  // a callback added twice is held once, as `addEventListener` holds it
  callbacks.add(callback);
  const held = callbacks;
  return () => {
    held.delete(callback);
  };
}
