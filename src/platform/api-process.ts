import { Client, Connection } from '@temporalio/client';
import type { AddressInfo } from 'node:net';
import { loadConfig } from '../config';
import { prepareDatabase } from '../db/migrate';
import { checkServerSettings } from '../db/server-settings';
import { createLogger } from '../lib/logger';
import { createMetrics, startMetricsServer } from '../lib/metrics';
import { createDeps, onShutdownSignals, startHttpServer, type ShutdownStep } from '../runtime';
import { createEslManager } from '../switch/esl';
import { createSimulatedSoftphones } from '../switch/simulator';
import {
  childShutdownOptions,
  reportReady,
  shareMetrics,
  simulatorOverEsl,
  SIMULATED_SOFTPHONES_ENV,
  stopWhenOrphaned,
  supervisedAs,
} from './child-process';

/**
 * One HTTP API process: the routes, the websocket live floor (events reach it from any process
 * through PostgreSQL, src/modules/live/live.listener.ts) and, when ESL_HOST is given, a switch link
 * of its own for the routes that command the switch (call control, supervision, manual dial,
 * SIP teardown). No worker runs here, so no dial tick or workflow replay ever holds a request.
 *
 * Under `npm start` the supervisor runs API_PROCESSES of these sharing PORT and aggregates their
 * metrics; on its own (`npm run api`) it applies migrations first, serves METRICS_PORT itself,
 * and needs TEMPORAL_ADDRESS.
 */
export async function runApiProcess(): Promise<void> {
  const child = supervisedAs('api');
  const config = loadConfig();
  const logger = createLogger(config.LOG_LEVEL, { role: 'api', ...(child ? { process: child.name } : {}) });
  const graceMs = config.SHUTDOWN_GRACE_MS;
  const stops: ShutdownStep[] = [];
  const stop = onShutdownSignals(logger, graceMs, () => [...stops].reverse(), childShutdownOptions(child));
  stopWhenOrphaned(child, stop);
  if (!config.TEMPORAL_ADDRESS) throw new Error('TEMPORAL_ADDRESS is required for an API process on its own (npm start runs a dev server)');
  if (!child) {
    const migrations = await prepareDatabase(config.ownerDatabaseUrl);
    logger.info({ applied: migrations.applied, already_applied: migrations.alreadyApplied }, 'database ready');
    for (const warning of await checkServerSettings(config.appDatabaseUrl)) logger.warn(warning, 'database server setting');
  }

  const connection = await Connection.connect({ address: config.TEMPORAL_ADDRESS });
  stops.push({ name: 'temporal client', run: () => connection.close() });
  const metrics = createMetrics();
  shareMetrics(child, metrics.registry);
  const esl = config.ESL_HOST
    ? createEslManager({
        host: config.ESL_HOST,
        port: config.ESL_PORT ?? 8021,
        password: config.ESL_PASSWORD ?? 'ClueCon',
        logger: logger.child({ component: 'esl' }),
        metrics: { registry: metrics.registry },
        livenessTimeoutMs: config.ESL_LIVENESS_TIMEOUT_MS,
      })
    : null;
  if (esl) stops.push({ name: 'switch link', run: () => esl.close() });
  const deps = await createDeps(config, logger, new Client({ connection, namespace: config.TEMPORAL_NAMESPACE }), esl);
  stops.push({ name: 'database pool', run: () => deps.db.close() });
  stops.push({ name: 'object store', run: () => deps.objectStore.close() });
  if (!child) {
    const server = await startMetricsServer(metrics.registry, config.METRICS_PORT, config.HOST);
    stops.push({ name: 'metrics listener', run: () => new Promise<void>((resolve) => server.close(() => resolve())) });
    logger.info({ metrics_port: (server.address() as AddressInfo).port }, 'api metrics listening');
  }
  if (esl && process.env[SIMULATED_SOFTPHONES_ENV] === '1') {
    const softphones = createSimulatedSoftphones(simulatorOverEsl(esl, logger), { logger: logger.child({ component: 'simulated-softphones' }) });
    deps.softphones = softphones;
    stops.push({ name: 'simulated softphones', run: () => Promise.resolve(softphones.stop()) });
  }
  const http = await startHttpServer(deps, metrics, config.PORT, config.HOST);
  stops.push({ name: 'http (stop accepting, close websockets, drain requests)', run: () => http.close(graceMs) });
  logger.info({ port: http.port }, 'api listening');
  if (child) reportReady(child, { port: http.port });
  else process.stdout.write(`dialer API listening on http://127.0.0.1:${http.port}\n`);
}
