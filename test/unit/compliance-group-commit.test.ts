import { GroupCommit, takeBatch } from '../../src/modules/compliance/group-commit';

/** A batch runner whose batches finish only when the test says so. */
function controlledRunner() {
  const calls: { key: string; items: number[]; finish(): void; fail(err: Error): void }[] = [];
  const run = (key: string, items: number[]) =>
    new Promise<string[]>((resolve, reject) => {
      calls.push({ key, items, finish: () => resolve(items.map((i) => `${key}:${i}`)), fail: reject });
    });
  return { calls, run };
}

const settle = () => new Promise((r) => setImmediate(r));

describe('takeBatch', () => {
  it('takes whole submissions in arrival order while they fit', () => {
    const queue = [{ items: [1, 2] }, { items: [3] }, { items: [4, 5] }, { items: [6] }];
    expect(takeBatch(queue, 3)).toEqual([{ items: [1, 2] }, { items: [3] }]);
    expect(queue).toEqual([{ items: [4, 5] }, { items: [6] }]);
  });

  it('always takes the first submission, even one larger than the limit', () => {
    const queue = [{ items: [1, 2, 3, 4] }, { items: [5] }];
    expect(takeBatch(queue, 2)).toEqual([{ items: [1, 2, 3, 4] }]);
    expect(queue).toEqual([{ items: [5] }]);
  });

  it('takes nothing from an empty queue', () => {
    expect(takeBatch([], 10)).toEqual([]);
  });
});

describe('GroupCommit', () => {
  it('runs a submission to an idle key at once, alone', async () => {
    const { calls, run } = controlledRunner();
    const gc = new GroupCommit(run, { maxItems: 10, maxInFlight: 1 });
    const done = gc.submit('t1', [1]);
    expect(calls).toHaveLength(1);
    expect(calls[0]!.items).toEqual([1]);
    calls[0]!.finish();
    await expect(done).resolves.toEqual(['t1:1']);
    expect(gc.activeKeys).toBe(0);
  });

  it('groups the submissions that arrive while the key is busy into the next batch, and answers each its own results', async () => {
    const { calls, run } = controlledRunner();
    const gc = new GroupCommit(run, { maxItems: 10, maxInFlight: 1 });
    const first = gc.submit('t1', [1]);
    const second = gc.submit('t1', [2, 3]);
    const third = gc.submit('t1', [4]);
    expect(calls).toHaveLength(1);
    calls[0]!.finish();
    await first;
    await settle();
    expect(calls).toHaveLength(2);
    expect(calls[1]!.items).toEqual([2, 3, 4]);
    calls[1]!.finish();
    await expect(second).resolves.toEqual(['t1:2', 't1:3']);
    await expect(third).resolves.toEqual(['t1:4']);
  });

  it('keeps keys independent: another tenant does not wait', () => {
    const { calls, run } = controlledRunner();
    const gc = new GroupCommit(run, { maxItems: 10, maxInFlight: 1 });
    void gc.submit('t1', [1]);
    void gc.submit('t2', [2]);
    expect(calls.map((c) => c.key)).toEqual(['t1', 't2']);
  });

  it('caps a batch at maxItems and runs the rest in the following batch', async () => {
    const { calls, run } = controlledRunner();
    const gc = new GroupCommit(run, { maxItems: 2, maxInFlight: 1 });
    void gc.submit('t1', [1]);
    const waiting = [gc.submit('t1', [2]), gc.submit('t1', [3]), gc.submit('t1', [4])];
    calls[0]!.finish();
    await settle();
    expect(calls[1]!.items).toEqual([2, 3]);
    calls[1]!.finish();
    await settle();
    expect(calls[2]!.items).toEqual([4]);
    calls[2]!.finish();
    await expect(Promise.all(waiting)).resolves.toEqual([['t1:2'], ['t1:3'], ['t1:4']]);
  });

  it('re-runs a failed batch one submission at a time, so only the failing one fails', async () => {
    const attempts: number[][] = [];
    let release!: () => void;
    const busy = new Promise<void>((r) => (release = r));
    const gc = new GroupCommit<string, number, string>(
      async (_key, items) => {
        attempts.push(items);
        // The first batch holds the key busy so that the next three submissions form one batch.
        if (items[0] === 1) await busy;
        if (items.includes(13)) throw new Error('bad item');
        return items.map(String);
      },
      { maxItems: 10, maxInFlight: 1 },
    );
    const pending = [gc.submit('t1', [1]), gc.submit('t1', [13]), gc.submit('t1', [2, 3])];
    release();
    const results = await Promise.allSettled(pending);
    expect(results[0]).toEqual({ status: 'fulfilled', value: ['1'] });
    expect(results[1]).toMatchObject({ status: 'rejected', reason: new Error('bad item') });
    expect(results[2]).toEqual({ status: 'fulfilled', value: ['2', '3'] });
    expect(attempts).toEqual([[1], [13, 2, 3], [13], [2, 3]]);
  });

  it('fails a lone submission without a re-run', async () => {
    let runs = 0;
    const gc = new GroupCommit<string, number, string>(
      () => {
        runs += 1;
        return Promise.reject(new Error('database down'));
      },
      { maxItems: 10, maxInFlight: 1 },
    );
    await expect(gc.submit('t1', [1, 2])).rejects.toThrow('database down');
    expect(runs).toBe(1);
  });

  it('fails a batch that answers the wrong number of results', async () => {
    const gc = new GroupCommit<string, number, string>(() => Promise.resolve(['only one']), { maxItems: 10, maxInFlight: 1 });
    await expect(gc.submit('t1', [1, 2])).rejects.toThrow('a batch of 2 answered 1 results');
  });

  it('keeps serving a key after a failed batch', async () => {
    let fail = true;
    const gc = new GroupCommit<string, number, string>(
      (_key, items) => (fail ? Promise.reject(new Error('transient')) : Promise.resolve(items.map(String))),
      { maxItems: 10, maxInFlight: 1 },
    );
    await expect(gc.submit('t1', [1])).rejects.toThrow('transient');
    fail = false;
    await expect(gc.submit('t1', [2])).resolves.toEqual(['2']);
    expect(gc.activeKeys).toBe(0);
  });

  it('runs up to maxInFlight batches of one key at once; what arrives meanwhile waits for one of them to finish', async () => {
    const { calls, run } = controlledRunner();
    const gc = new GroupCommit(run, { maxItems: 10, maxInFlight: 2 });
    const first = gc.submit('t1', [1]);
    const second = gc.submit('t1', [2]);
    const waiting = [gc.submit('t1', [3]), gc.submit('t1', [4])];
    expect(calls.map((c) => c.items)).toEqual([[1], [2]]);
    calls[1]!.finish();
    await expect(second).resolves.toEqual(['t1:2']);
    await settle();
    expect(calls.map((c) => c.items)).toEqual([[1], [2], [3, 4]]);
    const fifth = gc.submit('t1', [5]);
    expect(calls).toHaveLength(3);
    calls[0]!.finish();
    await expect(first).resolves.toEqual(['t1:1']);
    await settle();
    expect(calls[3]!.items).toEqual([5]);
    calls[2]!.finish();
    calls[3]!.finish();
    await expect(Promise.all([...waiting, fifth])).resolves.toEqual([['t1:3'], ['t1:4'], ['t1:5']]);
    expect(gc.activeKeys).toBe(0);
  });

  it('keeps a key while any of its batches is in flight', async () => {
    const { calls, run } = controlledRunner();
    const gc = new GroupCommit(run, { maxItems: 10, maxInFlight: 2 });
    void gc.submit('t1', [1]);
    const second = gc.submit('t1', [2]);
    calls[1]!.finish();
    await second;
    await settle();
    expect(gc.activeKeys).toBe(1);
    calls[0]!.finish();
    await settle();
    expect(gc.activeKeys).toBe(0);
  });

  it.each([0, -1, 1.5, Number.NaN])('refuses maxInFlight %p', (maxInFlight) => {
    expect(() => new GroupCommit(() => Promise.resolve([]), { maxItems: 10, maxInFlight })).toThrow('maxInFlight must be a positive integer');
  });

  it('answers an empty submission without running anything', async () => {
    const { calls, run } = controlledRunner();
    const gc = new GroupCommit(run, { maxItems: 10, maxInFlight: 1 });
    await expect(gc.submit('t1', [])).resolves.toEqual([]);
    expect(calls).toHaveLength(0);
  });
});
