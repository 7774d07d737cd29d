import { createMetrics, dialerMetrics, IN_FLIGHT_STALE_MS, webhookMetrics, workerMetrics } from '../../src/lib/metrics';

async function series(name: string): Promise<Array<{ labels: Record<string, string | number>; value: number }>> {
  return (await samples(name)).map(({ labels, value }) => ({ labels, value }));
}

async function samples(name: string) {
  const { registry } = createMetrics({ processMetrics: false });
  const metric = registry.getSingleMetric(name);
  if (!metric) throw new Error(`${name} is not registered`);
  // A histogram's values name their series (_bucket, _sum, _count).
  return (await metric.get()).values.map((v) => ({ name: (v as { metricName?: string }).metricName ?? name, labels: v.labels as Record<string, string | number>, value: v.value }));
}

describe('work metrics', () => {
  afterEach(() => jest.useRealTimers());

  it('has the process collectors by default, and leaves them off when asked', () => {
    expect(createMetrics().registry.getSingleMetric('process_cpu_user_seconds_total')).toBeDefined();
    expect(createMetrics().registry.getSingleMetric('nodejs_gc_duration_seconds')).toBeDefined();
    const bare = createMetrics({ processMetrics: false }).registry;
    expect(bare.getSingleMetric('process_cpu_user_seconds_total')).toBeUndefined();
    expect(bare.getSingleMetric('nodejs_gc_duration_seconds')).toBeUndefined();
    expect(bare.getSingleMetric('http_requests_total')).toBeDefined();
  });

  it('serves the same process-wide counters from every scrape registry', async () => {
    dialerMetrics.dialed('progressive', 2);
    dialerMetrics.dialed('progressive', 0);
    const a = createMetrics({ processMetrics: false }).registry.getSingleMetric('dialer_dials_total');
    const b = createMetrics({ processMetrics: false }).registry.getSingleMetric('dialer_dials_total');
    expect(a).toBe(b);
    expect((await series('dialer_dials_total')).find((s) => s.labels.campaign_type === 'progressive')?.value).toBe(2);
  });

  it('drops a campaign from the in-flight gauge when it stops or stops ticking here', async () => {
    jest.useFakeTimers({ now: new Date('2026-11-24T12:00:00Z') });
    dialerMetrics.inFlight('c-stopped', 3);
    dialerMetrics.inFlight('c-quiet', 2);
    dialerMetrics.inFlight('c-stopped', null);
    expect(await series('dialer_calls_in_flight')).toEqual([{ labels: { campaign_id: 'c-quiet' }, value: 2 }]);
    jest.setSystemTime(Date.now() + IN_FLIGHT_STALE_MS + 1);
    expect(await series('dialer_calls_in_flight')).toEqual([]);
  });

  it('has every webhook outcome at 0 before the first attempt, and times only deliveries', async () => {
    expect((await series('webhook_delivery_attempts_total')).map((s) => [s.labels.outcome, s.value])).toEqual([
      ['delivered', 0],
      ['retry', 0],
      ['dead_letter', 0],
      ['disabled', 0],
    ]);
    const created = new Date('2026-11-24T12:00:00Z');
    webhookMetrics.attempt('retry', created, new Date(created.getTime() + 1_000));
    webhookMetrics.attempt('dead_letter', created, new Date(created.getTime() + 2_000));
    webhookMetrics.attempt('delivered', created, new Date(created.getTime() + 2_500));
    const latency = await samples('webhook_delivery_latency_seconds');
    expect(latency.find((s) => s.name === 'webhook_delivery_latency_seconds_count')?.value).toBe(1);
    expect(latency.find((s) => s.name === 'webhook_delivery_latency_seconds_sum')?.value).toBe(2.5);
    expect((await series('webhook_dead_letters_total'))[0]!.value).toBe(1);
  });

  it('reports a worker by its state at scrape time', async () => {
    let state = 'RUNNING';
    workerMetrics.track('q1', () => state);
    expect(await series('worker_state')).toEqual([{ labels: { task_queue: 'q1' }, value: 1 }]);
    state = 'DRAINING';
    expect(await series('worker_state')).toEqual([{ labels: { task_queue: 'q1' }, value: 0 }]);
  });
});
