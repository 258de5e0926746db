/**
 * Runs `step` in `concurrency` parallel lanes until stopped. A lane that finds no work sleeps
 * until `wake()` or the poll interval, so an idle process costs one cheap query per interval.
 * `wake()` (one new item) wakes one sleeping lane: waking them all made every lane race for the
 * same item, one claim query each (several per job and per delivery). A lane that found work
 * looks again at once, so a burst of items still spreads over the lanes, one wake each. A lane whose
 * steps keep failing for a reason `backsOff` names (the database is down) waits twice as long after
 * each such failure, up to MAX_ERROR_BACKOFF_MS, so an outage costs a few log lines a minute, not
 * several a second; any other failure (one bad item) leaves the poll interval as it is.
 */
export const MAX_ERROR_BACKOFF_MS = 15_000;

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
      /** Whether a step's failure is one to back off from (the default: none is). */
      backsOff?: (err: unknown) => boolean;
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
    let failures = 0;
    while (!this.stopping) {
      let didWork = false;
      try {
        didWork = await this.step();
        failures = 0;
      } catch (err) {
        this.options.onError(err);
        failures = this.options.backsOff?.(err) ? failures + 1 : 0;
      }
      if (!didWork && !this.stopping) {
        const { pollMs } = this.options;
        const backoff = Math.min(pollMs * 2 ** Math.min(failures, 20), MAX_ERROR_BACKOFF_MS);
        await this.sleep(failures === 0 ? pollMs : Math.max(pollMs, backoff));
      }
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.wakers.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.wakers.add(done);
    });
  }
}
