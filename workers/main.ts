import { Client, Connection } from '@temporalio/client';
import type { AddressInfo } from 'node:net';
import { loadConfig } from '../src/config';
import { createLogger } from '../src/lib/logger';
import { createMetrics, startMetricsServer } from '../src/lib/metrics';
import { createDeps, onShutdownSignals, type ShutdownStep } from '../src/runtime';
import { createEslManager } from '../src/switch/esl';
import { runServiceWorker } from './worker';
import { childShutdownOptions, reportReady, shareMetrics, stopWhenOrphaned, supervisedAs } from '../src/platform/child-process';

/**
 * A worker on its own (`npm run worker`), for deployments that scale workers apart from the API.
 * Needs TEMPORAL_ADDRESS and the switch (ESL_HOST, ESL_PORT, ESL_PASSWORD): the dial loop's
 * activities place calls and the worker relays call events. Migrations are the API's job.
 * SIGTERM/SIGINT stop polling, let in-flight activities finish for SHUTDOWN_GRACE_MS (then cancel
 * them through their heartbeat), and close the switch link and the database; a second signal
 * forces the exit.
 *
 * `npm start` runs WORKER_PROCESSES of these (src/platform/supervisor.ts), which gives them the
 * Temporal and switch addresses and serves their metrics on its own METRICS_PORT.
 */
async function main(): Promise<void> {
  const child = supervisedAs('worker');
  const config = loadConfig();
  const logger = createLogger(config.LOG_LEVEL, { role: 'worker', ...(child ? { process: child.name } : {}) });
  const graceMs = config.SHUTDOWN_GRACE_MS;
  const stops: ShutdownStep[] = [];
  const stop = onShutdownSignals(logger, graceMs, () => [...stops].reverse(), childShutdownOptions(child));
  stopWhenOrphaned(child, stop);
  if (!config.TEMPORAL_ADDRESS) throw new Error('TEMPORAL_ADDRESS is required for a standalone worker');
  if (!config.ESL_HOST) throw new Error('ESL_HOST is required for a standalone worker (the switch it places calls on)');
  const metrics = createMetrics();
  shareMetrics(child, metrics.registry);
  const connection = await Connection.connect({ address: config.TEMPORAL_ADDRESS });
  stops.push({ name: 'temporal client', run: () => connection.close() });
  const esl = createEslManager({
    host: config.ESL_HOST,
    port: config.ESL_PORT ?? 8021,
    password: config.ESL_PASSWORD ?? 'ClueCon',
    logger: logger.child({ component: 'esl' }),
    metrics: { registry: metrics.registry },
    livenessTimeoutMs: config.ESL_LIVENESS_TIMEOUT_MS,
  });
  stops.push({ name: 'switch link', run: () => esl.close() });
  const deps = await createDeps(config, logger, new Client({ connection, namespace: config.TEMPORAL_NAMESPACE }), esl);
  stops.push({ name: 'database pool', run: () => deps.db.close() });
  stops.push({ name: 'object store', run: () => deps.objectStore.close() });
  // Before the worker, so it closes after it: a scrape during the drain still sees the worker.
  // A port that cannot be bound costs the scrape (the target shows down), not the worker.
  if (!child) {
    await startMetricsServer(metrics.registry, config.WORKER_METRICS_PORT, config.HOST).then(
      (server) => {
        stops.push({ name: 'metrics listener', run: () => new Promise<void>((resolve) => server.close(() => resolve())) });
        logger.info({ metrics_port: (server.address() as AddressInfo).port }, 'worker metrics listening');
      },
      (err: unknown) => logger.error({ err }, 'worker metrics listener could not start; the worker runs without it'),
    );
  }
  const { running, step } = await runServiceWorker(deps, config.TEMPORAL_ADDRESS);
  stops.push(step);
  logger.info({ task_queue: config.TEMPORAL_TASK_QUEUE }, 'worker running');
  reportReady(child);
  // A worker that fails on its own (not through a signal) takes the process down with it.
  running.catch((err: unknown) => {
    logger.error({ err }, 'worker failed');
    process.exit(1);
  });
}

main().catch((err: unknown) => {
  process.stderr.write(`worker failed: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
