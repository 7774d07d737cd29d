import { createServer, type Server } from 'node:http';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry, type Metric } from 'prom-client';
import { AUTH_METRICS } from './auth-metrics';

export interface HttpMetrics {
  observe(method: string, route: string, status: number, seconds: number): void;
}

export interface Metrics {
  registry: Registry;
  http: HttpMetrics;
}

export interface MetricsOptions {
  /**
   * prom-client's process collectors (CPU, memory, event-loop lag, GC pauses), on by default. They
   * hook into the process (a GC observer, an event-loop histogram) and cannot be stopped, so they
   * keep their registry alive for the process's life: one registry a process has them; code that
   * makes and drops registries many times in one process (the test harness) leaves them off.
   */
  processMetrics?: boolean;
}

export function createMetrics(options: MetricsOptions = {}): Metrics {
  const registry = new Registry();
  registry.setDefaultLabels({ service: 'dialer-control-plane' });
  if (options.processMetrics !== false) collectDefaultMetrics({ register: registry });
  for (const metric of PROCESS_METRICS) registry.registerMetric(metric);
  const requests = new Counter({
    name: 'http_requests_total',
    help: 'HTTP requests by method, route template and status',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP request latency by method, route template and status',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [registry],
  });
  return {
    registry,
    http: {
      observe(method, route, status, seconds) {
        const labels = { method, route, status: String(status) };
        requests.inc(labels);
        duration.observe(labels, seconds);
      },
    },
  };
}

/*
 * The work metrics below are process-wide, like the work they count: a dial tick or a webhook
 * delivery records into them wherever it runs, and each process's scrape registry (createMetrics)
 * serves them. Modules record through the typed recorders, never through prom-client directly,
 * so every name, label and bucket is declared here, once.
 */

const TICK_BUCKETS = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
/** The retry ladder spans hours, so latency buckets reach a day. */
const DELIVERY_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600, 6 * 3600, 24 * 3600];
/** A campaign whose ticks stopped this long ago leaves the in-flight gauge (stopped, or moved to another worker). */
export const IN_FLIGHT_STALE_MS = 60_000;

const dials = new Counter({
  name: 'dialer_dials_total',
  help: 'Calls originated on the switch (dial loop and human-initiated), by campaign type',
  labelNames: ['campaign_type'] as const,
  registers: [],
});
const dialsBlocked = new Counter({
  name: 'dialer_dials_blocked_total',
  help: 'Dial-time compliance refusals by the gate that refused',
  labelNames: ['gate'] as const,
  registers: [],
});
const callsAbandoned = new Counter({
  name: 'dialer_calls_abandoned_total',
  help: 'Human-answered calls abandoned (no agent in time), by campaign',
  labelNames: ['campaign_id'] as const,
  registers: [],
});
const callsConnected = new Counter({
  name: 'dialer_calls_connected_total',
  help: 'Human-answered calls connected to an agent, by campaign (the abandonment rate denominator with the abandoned)',
  labelNames: ['campaign_id'] as const,
  registers: [],
});
const inFlightByCampaign = new Map<string, { calls: number; at: number }>();
const callsInFlight = new Gauge({
  name: 'dialer_calls_in_flight',
  help: 'Calls originated and not yet ended, by running campaign, as its last tick counted them',
  labelNames: ['campaign_id'] as const,
  registers: [],
  collect() {
    this.reset();
    const now = Date.now();
    for (const [campaignId, seen] of inFlightByCampaign) {
      if (now - seen.at > IN_FLIGHT_STALE_MS) inFlightByCampaign.delete(campaignId);
      else this.set({ campaign_id: campaignId }, seen.calls);
    }
  },
});
const tickLag = new Histogram({
  name: 'dialer_tick_lag_seconds',
  help: 'How late a dial tick started: from the workflow scheduling the tick activity to a worker starting it',
  buckets: TICK_BUCKETS,
  registers: [],
});
const tickDuration = new Histogram({
  name: 'dialer_tick_duration_seconds',
  help: 'Duration of one dial tick (reap, decide, record, originate)',
  buckets: TICK_BUCKETS,
  registers: [],
});

export type WebhookAttemptOutcome = 'delivered' | 'retry' | 'dead_letter' | 'disabled';
const WEBHOOK_OUTCOMES: readonly WebhookAttemptOutcome[] = ['delivered', 'retry', 'dead_letter', 'disabled'];
const webhookLatency = new Histogram({
  name: 'webhook_delivery_latency_seconds',
  help: 'From the event (its outbox row) to the receiver accepting its delivery, retries included',
  buckets: DELIVERY_BUCKETS,
  registers: [],
});
const webhookAttempts = new Counter({
  name: 'webhook_delivery_attempts_total',
  help: 'Webhook delivery attempts by outcome: delivered, retry (failed, another attempt is scheduled), dead_letter, disabled (endpoint disabled)',
  labelNames: ['outcome'] as const,
  registers: [],
});
const webhookDeadLetters = new Counter({
  name: 'webhook_dead_letters_total',
  help: 'Deliveries that exhausted the retry ladder and became dead letters',
  registers: [],
});
for (const outcome of WEBHOOK_OUTCOMES) webhookAttempts.inc({ outcome }, 0);

export type ActivityOutcome = 'completed' | 'failed' | 'cancelled';
const workerStates = new Map<string, () => string>();
const workerState = new Gauge({
  name: 'worker_state',
  help: '1 while the Temporal worker of the task queue is RUNNING, else 0',
  labelNames: ['task_queue'] as const,
  registers: [],
  collect() {
    this.reset();
    for (const [taskQueue, state] of workerStates) this.set({ task_queue: taskQueue }, state() === 'RUNNING' ? 1 : 0);
  },
});
const activityTasks = new Counter({
  name: 'worker_activity_tasks_total',
  help: 'Activity task executions on this worker by activity type and outcome (completed, failed, cancelled)',
  labelNames: ['activity_type', 'outcome'] as const,
  registers: [],
});
const activityDuration = new Histogram({
  name: 'worker_activity_duration_seconds',
  help: 'Activity task execution time by activity type',
  labelNames: ['activity_type'] as const,
  buckets: TICK_BUCKETS,
  registers: [],
});

const PROCESS_METRICS: Metric[] = [
  dials,
  dialsBlocked,
  callsAbandoned,
  callsConnected,
  callsInFlight,
  tickLag,
  tickDuration,
  webhookLatency,
  webhookAttempts,
  webhookDeadLetters,
  workerState,
  activityTasks,
  activityDuration,
  ...AUTH_METRICS,
];

export const dialerMetrics = {
  dialed(campaignType: string, calls: number): void {
    if (calls > 0) dials.inc({ campaign_type: campaignType }, calls);
  },
  blocked(gates: readonly string[]): void {
    for (const gate of gates) dialsBlocked.inc({ gate });
  },
  /** The change of the run's CDR counters since the previous tick (what pacing consumes too). */
  answered(campaignId: string, connected: number, abandoned: number): void {
    if (connected > 0) callsConnected.inc({ campaign_id: campaignId }, connected);
    if (abandoned > 0) callsAbandoned.inc({ campaign_id: campaignId }, abandoned);
  },
  /** null: the campaign is no longer running, so it leaves the gauge at once. */
  inFlight(campaignId: string, calls: number | null): void {
    if (calls === null) inFlightByCampaign.delete(campaignId);
    else inFlightByCampaign.set(campaignId, { calls, at: Date.now() });
  },
  tickLag(seconds: number): void {
    tickLag.observe(Math.max(0, seconds));
  },
  tickDuration(seconds: number): void {
    tickDuration.observe(seconds);
  },
};

export const webhookMetrics = {
  attempt(outcome: WebhookAttemptOutcome, eventCreatedAt: Date, at: Date): void {
    webhookAttempts.inc({ outcome });
    if (outcome === 'delivered') webhookLatency.observe(Math.max(0, (at.getTime() - eventCreatedAt.getTime()) / 1000));
    if (outcome === 'dead_letter') webhookDeadLetters.inc();
  },
};

export const workerMetrics = {
  /** The worker of a task queue reports its state at every scrape (the latest one per queue). */
  track(taskQueue: string, state: () => string): void {
    workerStates.set(taskQueue, state);
  },
  activity(activityType: string, outcome: ActivityOutcome, seconds: number): void {
    activityTasks.inc({ activity_type: activityType, outcome });
    activityDuration.observe({ activity_type: activityType }, seconds);
  },
};

/** Prometheus scrape endpoint on its own port (METRICS_PORT), GET /metrics only. */
export function startMetricsServer(registry: Registry, port: number, host: string): Promise<Server> {
  const server = createServer((req, res) => {
    if (req.method === 'GET' && req.url?.split('?')[0] === '/metrics') {
      registry
        .metrics()
        .then((body) => {
          res.writeHead(200, { 'content-type': registry.contentType });
          res.end(body);
        })
        .catch(() => {
          res.writeHead(500).end();
        });
      return;
    }
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: { code: 'not_found', message: 'no such route' } }));
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve(server));
  });
}
