import { Client, Connection } from '@temporalio/client';
import type { Worker } from '@temporalio/worker';
import { createWorker } from '../workers/worker';
import { loadConfig, SERVICE_VERSION } from './config';
import { prepareDatabase } from './db/migrate';
import { randomBytes } from 'node:crypto';
import { createLogger } from './lib/logger';
import { createMetrics, startMetricsServer } from './lib/metrics';
import { ensureTemporalBinary, readTemporalDevConfig, startTemporalDevServer, type DevServer } from './platform/temporal-dev';
import { createDeps, startHttpServer } from './runtime';
import { createEslManager } from './switch/esl';
import { startSwitchSimulator } from './switch/simulator';

/**
 * `npm start`: migrations, an embedded Temporal dev server unless TEMPORAL_ADDRESS is given, the
 * worker, the HTTP API and the metrics listener, in the foreground until SIGINT/SIGTERM.
 */
async function main(): Promise<void> {
  const config = loadConfig();
  const logger = createLogger(config.LOG_LEVEL);
  const stops: (() => Promise<void>)[] = [];
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    for (const stop of stops.reverse()) {
      await stop().catch((err: unknown) => logger.error({ err }, 'error during shutdown'));
    }
    logger.info('stopped');
    process.exit(0);
  };
  process.once('SIGINT', () => void shutdown('SIGINT'));
  process.once('SIGTERM', () => void shutdown('SIGTERM'));

  if (config.egressAllowlist.length) {
    logger.warn({ origins: config.egressAllowlist }, 'EGRESS_ALLOWLIST exempts these origins from the public-address and https-443 checks');
  }

  const migrations = await prepareDatabase(config.ownerDatabaseUrl);
  logger.info({ applied: migrations.applied, already_applied: migrations.alreadyApplied }, 'database ready');

  let temporalAddress = config.TEMPORAL_ADDRESS;
  let devServer: DevServer | null = null;
  if (!temporalAddress) {
    const devConfig = readTemporalDevConfig();
    const binary = ensureTemporalBinary(config.TOOLS_DIR, devConfig.cli, (msg) => logger.info(msg));
    devServer = await startTemporalDevServer({ binary, config: devConfig.server });
    temporalAddress = devServer.address;
    const server = devServer;
    stops.push(() => server.stop());
  }

  const connection = await Connection.connect({ address: temporalAddress });
  stops.push(() => connection.close());
  const temporal = new Client({ connection, namespace: config.TEMPORAL_NAMESPACE });

  // The switch: FreeSWITCH when ESL_HOST is given, else the bundled simulator on loopback.
  let eslTarget = { host: config.ESL_HOST ?? '', port: config.ESL_PORT ?? 8021, password: config.ESL_PASSWORD ?? 'ClueCon' };
  let switchLabel = `FreeSWITCH at ${eslTarget.host}:${eslTarget.port}`;
  if (!config.ESL_HOST) {
    const simulator = await startSwitchSimulator({ host: '127.0.0.1', port: config.ESL_PORT ?? 0, password: randomBytes(12).toString('hex') });
    stops.push(() => simulator.stop());
    eslTarget = { host: '127.0.0.1', port: simulator.port, password: simulator.password };
    switchLabel = `simulator on 127.0.0.1:${simulator.port} (set ESL_HOST for FreeSWITCH)`;
  }
  const metrics = createMetrics();
  const esl = createEslManager({ ...eslTarget, logger: logger.child({ component: 'esl' }), metrics: { registry: metrics.registry } });
  stops.push(() => esl.close());
  const deps = await createDeps(config, logger, temporal, esl);
  stops.push(() => deps.db.close());

  const { worker, connection: workerConnection, stopRelay } = await createWorker(deps, {
    address: temporalAddress,
    namespace: config.TEMPORAL_NAMESPACE,
    taskQueue: config.TEMPORAL_TASK_QUEUE,
  });
  const running: Promise<void> = worker.run();
  stops.push(async () => {
    await stopWorker(worker, running);
    await stopRelay();
    await workerConnection.close();
  });

  const metricsServer = await startMetricsServer(metrics.registry, config.METRICS_PORT, config.HOST);
  stops.push(() => new Promise<void>((resolve) => metricsServer.close(() => resolve())));
  const http = await startHttpServer(deps, metrics, config.PORT, config.HOST);
  stops.push(() => http.close());

  const lines = [
    `dialer control plane ${SERVICE_VERSION} is up`,
    `  API          http://127.0.0.1:${http.port}  (health: /healthz, reference: /v1/docs)`,
    `  metrics      http://127.0.0.1:${config.METRICS_PORT}/metrics`,
    `  Temporal     ${temporalAddress} namespace ${config.TEMPORAL_NAMESPACE}, task queue ${config.TEMPORAL_TASK_QUEUE}`,
    `  Temporal UI  ${devServer?.uiUrl ?? '(external server: see its own UI)'}`,
    `  Switch       ${switchLabel}`,
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}

async function stopWorker(worker: Worker, running: Promise<void>): Promise<void> {
  if (worker.getState() === 'RUNNING') worker.shutdown();
  await running;
}

main().catch((err: unknown) => {
  process.stderr.write(`start-up failed: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
