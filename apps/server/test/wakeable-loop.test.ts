import { afterEach, describe, expect, it } from 'vitest';
import { WakeableLoop } from '../src/workers/wakeable-loop.js';

const tick = () => new Promise((resolve) => setTimeout(resolve, 20));

describe('WakeableLoop', () => {
  let loop: WakeableLoop | undefined;
  afterEach(async () => {
    await loop?.stop();
    loop = undefined;
  });

  /** A queue of `pending` items drained by `concurrency` lanes; counts every look at it. */
  function drainer(concurrency: number) {
    const state = { pending: 0, looks: 0, done: 0 };
    loop = new WakeableLoop(
      async () => {
        state.looks++;
        if (state.pending === 0) return false;
        state.pending--;
        await tick();
        state.done++;
        return true;
      },
      {
        concurrency,
        pollMs: 60_000,
        onError: (err) => {
          throw err;
        },
      },
    );
    loop.start();
    return state;
  }

  it('wakes one sleeping lane per item, not all of them', async () => {
    const state = drainer(4);
    await tick();
    expect(state.looks).toBe(4);
    state.pending = 1;
    loop!.wake();
    await tick();
    await tick();
    expect(state.done).toBe(1);
    // the woken lane's look (it found the item) and its look after finishing: the other three slept on
    expect(state.looks).toBe(6);
  });

  it('spreads a burst over the lanes, one wake per item', async () => {
    const state = drainer(4);
    await tick();
    state.pending = 8;
    for (let i = 0; i < 8; i++) loop!.wake();
    await tick();
    await tick();
    await tick();
    expect(state.done).toBe(8);
    expect(state.pending).toBe(0);
  });

  it('stop wakes every sleeping lane and resolves', async () => {
    drainer(3);
    await tick();
    const stopped = loop!.stop();
    await expect(stopped).resolves.toBeUndefined();
    loop = undefined;
  });
});
