import { afterEach, describe, expect, it, vi } from 'vitest';
import { MAX_ERROR_BACKOFF_MS, WakeableLoop } from '../src/workers/wakeable-loop.js';

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

  it('a lane whose steps keep failing for a reason it backs off from waits twice as long after each failure, and polls as before after a success; other failures keep the poll interval', async () => {
    vi.useFakeTimers();
    try {
      const looks: number[] = [];
      let failing = true;
      let outage = true;
      loop = new WakeableLoop(
        async () => {
          looks.push(Date.now());
          if (failing) throw new Error(outage ? 'database down' : 'one bad item');
          return false;
        },
        {
          concurrency: 1,
          pollMs: 20,
          onError: () => {},
          backsOff: (err) => (err as Error).message === 'database down',
        },
      );
      const start = Date.now();
      loop.start();
      await vi.advanceTimersByTimeAsync(700);
      expect(looks.map((t) => t - start)).toEqual([0, 40, 120, 280, 600]);
      await vi.advanceTimersByTimeAsync(MAX_ERROR_BACKOFF_MS * 3);
      const gaps = looks.slice(1).map((t, i) => t - looks[i]!);
      expect(Math.max(...gaps)).toBe(MAX_ERROR_BACKOFF_MS);

      failing = false;
      loop.wake();
      await vi.advanceTimersByTimeAsync(0);
      const recovered = looks.length;
      await vi.advanceTimersByTimeAsync(100);
      expect(looks.length - recovered).toBe(5);

      failing = true;
      outage = false;
      const before = looks.length;
      await vi.advanceTimersByTimeAsync(100);
      expect(looks.length - before).toBe(5);
    } finally {
      await loop?.stop();
      loop = undefined;
      vi.useRealTimers();
    }
  });

  it('stop wakes every sleeping lane and resolves', async () => {
    drainer(3);
    await tick();
    const stopped = loop!.stop();
    await expect(stopped).resolves.toBeUndefined();
    loop = undefined;
  });
});
