/**
 * Group commit: work items submitted under one key (a tenant) while that key's batches are in
 * flight wait and go together in the next batch, so a burst of N concurrent submissions costs a few
 * transactions instead of N. A submission that finds fewer than `maxInFlight` of its key's batches
 * running starts at once: at low load nothing waits. The cap bounds how many of a key's batches
 * contend with each other (a tenant's decisions share its audit chain's lanes).
 *
 * A failed batch of several submissions is re-run one submission at a time, so one bad
 * submission (or one it could not be told apart from) fails only itself.
 */
export type RunBatch<K, I, R> = (key: K, items: I[]) => Promise<R[]>;

export interface GroupCommitOptions {
  /** Items one batch may take; a single submission larger than this still runs whole. */
  maxItems: number;
  /** Batches of one key that may run at once (at least 1). */
  maxInFlight: number;
}

interface Submission<I, R> {
  items: I[];
  resolve(results: R[]): void;
  reject(err: unknown): void;
}

interface KeyState<I, R> {
  queue: Submission<I, R>[];
  inFlight: number;
}

export class GroupCommit<K, I, R> {
  private readonly keys = new Map<K, KeyState<I, R>>();

  constructor(
    private readonly run: RunBatch<K, I, R>,
    private readonly options: GroupCommitOptions,
  ) {
    if (!Number.isInteger(options.maxInFlight) || options.maxInFlight < 1) throw new Error(`group commit: maxInFlight must be a positive integer, got ${options.maxInFlight}`);
  }

  submit(key: K, items: I[]): Promise<R[]> {
    if (items.length === 0) return Promise.resolve([]);
    return new Promise<R[]>((resolve, reject) => {
      let state = this.keys.get(key);
      if (!state) {
        state = { queue: [], inFlight: 0 };
        this.keys.set(key, state);
      }
      state.queue.push({ items, resolve, reject });
      if (state.inFlight < this.options.maxInFlight) this.drain(key, state);
    });
  }

  /** Keys with a batch in flight or submissions waiting (for tests and metrics). */
  get activeKeys(): number {
    return this.keys.size;
  }

  private drain(key: K, state: KeyState<I, R>): void {
    const batch = takeBatch(state.queue, this.options.maxItems);
    if (batch.length === 0) {
      if (state.inFlight === 0) this.keys.delete(key);
      return;
    }
    state.inFlight += 1;
    void this.runBatch(key, batch).finally(() => {
      state.inFlight -= 1;
      this.drain(key, state);
    });
  }

  private async runBatch(key: K, batch: Submission<I, R>[]): Promise<void> {
    try {
      const results = await this.runChecked(key, batch.flatMap((s) => s.items));
      let offset = 0;
      for (const s of batch) {
        s.resolve(results.slice(offset, offset + s.items.length));
        offset += s.items.length;
      }
    } catch (err) {
      if (batch.length === 1) {
        batch[0]!.reject(err);
        return;
      }
      await Promise.all(
        batch.map(async (s) => {
          try {
            s.resolve(await this.runChecked(key, s.items));
          } catch (alone) {
            s.reject(alone);
          }
        }),
      );
    }
  }

  private async runChecked(key: K, items: I[]): Promise<R[]> {
    const results = await this.run(key, items);
    if (results.length !== items.length) throw new Error(`group commit: a batch of ${items.length} answered ${results.length} results`);
    return results;
  }
}

/**
 * Removes from the front of the queue the submissions of the next batch: whole submissions, in
 * arrival order, while they fit in maxItems (the first one always goes, whatever its size).
 */
export function takeBatch<S extends { items: unknown[] }>(queue: S[], maxItems: number): S[] {
  let count = 0;
  let n = 0;
  while (n < queue.length) {
    const size = queue[n]!.items.length;
    if (n > 0 && count + size > maxItems) break;
    count += size;
    n += 1;
  }
  return queue.splice(0, n);
}
