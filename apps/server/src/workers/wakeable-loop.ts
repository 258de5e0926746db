/**
 * Runs `step` in `concurrency` parallel lanes until stopped. A lane that finds no work sleeps
 * until `wake()` or the poll interval, so an idle process costs one cheap query per interval.
 * `wake()` (one new item) wakes one sleeping lane: waking them all made every lane race for the
 * same item, one claim query each (several per job and per delivery). A lane that found work
 * looks again at once, so a burst of items still spreads over the lanes, one wake each.
 */
export class WakeableLoop {
  private stopping = false;
  private wakers = new Set<() => void>();
  private lanes: Promise<void>[] = [];

  constructor(
    private readonly step: () => Promise<boolean>,
    private readonly options: {
      concurrency: number;
      pollMs: number;
      onError: (err: unknown) => void;
    },
  ) {}

  start(): void {
    for (let i = 0; i < this.options.concurrency; i++) this.lanes.push(this.lane());
  }

  wake(): void {
    const longestAsleep = this.wakers.values().next();
    if (!longestAsleep.done) longestAsleep.value();
  }

  /** Stops taking new work and waits for the lanes' current steps to finish. */
  async stop(): Promise<void> {
    this.stopping = true;
    for (const wake of [...this.wakers]) wake();
    await Promise.all(this.lanes);
  }

  get isStopping(): boolean {
    return this.stopping;
  }

  private async lane(): Promise<void> {
    while (!this.stopping) {
      let didWork = false;
      try {
        didWork = await this.step();
      } catch (err) {
        this.options.onError(err);
      }
      if (!didWork && !this.stopping) await this.sleep();
    }
  }

  private sleep(): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.wakers.delete(done);
        resolve();
      };
      const timer = setTimeout(done, this.options.pollMs);
      this.wakers.add(done);
    });
  }
}
