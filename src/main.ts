import { Client, Connection } from '@temporalio/client';
import { runServiceWorker } from '../workers/worker';
import { loadConfig, SERVICE_VERSION } from './config';
import { prepareDatabase } from './db/migrate';
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { createLogger } from './lib/logger';
import { createMetrics, startMetricsServer } from './lib/metrics';
import { ensureTemporalBinary, readTemporalDevConfig, startTemporalDevServer, type DevServer } from './platform/temporal-dev';
import { createDeps, onShutdownSignals, startHttpServer, type ShutdownStep } from './runtime';
import { createEslManager } from './switch/esl';
import { createSimulatedSoftphones, startSwitchSimulator, type SwitchSimulator } from './switch/simulator';
import { SWITCH_DIRECTORY_PATH } from './modules/switch-directory/switch-directory.routes';
import { switchRecordingsDir } from './modules/recordings/recording-capture.service';

/**
 * `npm start`: migrations, an embedded Temporal dev server unless TEMPORAL_ADDRESS is given, the
 * worker, the HTTP API and the metrics listener, in the foreground until SIGINT/SIGTERM, which
 * drains them in reverse order (HTTP first, so no new work arrives while the rest stops).
 */
async function main(): Promise<void> {
  const config = loadConfig();
  const logger = createLogger(config.LOG_LEVEL);
  const graceMs = config.SHUTDOWN_GRACE_MS;
  // Filled as start-up goes; a signal mid-way stops what has started, the newest first.
  const stops: ShutdownStep[] = [];
  onShutdownSignals(logger, graceMs, () => [...stops].reverse());

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
    stops.push({ name: 'temporal dev server', run: () => server.stop() });
  }

  const connection = await Connection.connect({ address: temporalAddress });
  stops.push({ name: 'temporal client', run: () => connection.close() });
  const temporal = new Client({ connection, namespace: config.TEMPORAL_NAMESPACE });

  // The switch: FreeSWITCH when ESL_HOST is given, else the bundled simulator on loopback.
  let eslTarget = { host: config.ESL_HOST ?? '', port: config.ESL_PORT ?? 8021, password: config.ESL_PASSWORD ?? 'ClueCon' };
  let switchLabel = `FreeSWITCH at ${eslTarget.host}:${eslTarget.port}`;
  let simulator: SwitchSimulator | null = null;
  if (!config.ESL_HOST) {
    // The embedded simulator authenticates to the directory like FreeSWITCH would; without a
    // configured token this process makes one up for the two of them.
    config.SWITCH_DIRECTORY_TOKEN ??= randomBytes(24).toString('hex');
    simulator = await startSwitchSimulator({
      host: '127.0.0.1',
      port: config.ESL_PORT ?? 0,
      password: randomBytes(12).toString('hex'),
      recordingsDir: switchRecordingsDir(config),
    });
    const sim = simulator;
    stops.push({ name: 'switch simulator', run: () => sim.stop() });
    eslTarget = { host: '127.0.0.1', port: sim.port, password: sim.password };
    switchLabel = `simulator on 127.0.0.1:${sim.port} (set ESL_HOST for FreeSWITCH)`;
  }
  const metrics = createMetrics();
  const esl = createEslManager({
    ...eslTarget,
    logger: logger.child({ component: 'esl' }),
    metrics: { registry: metrics.registry },
    livenessTimeoutMs: config.ESL_LIVENESS_TIMEOUT_MS,
  });
  stops.push({ name: 'switch link', run: () => esl.close() });
  const deps = await createDeps(config, logger, temporal, esl);
  stops.push({ name: 'database pool', run: () => deps.db.close() });
  stops.push({ name: 'object store', run: () => deps.objectStore.close() });

  // Before the worker, so it closes after it: a scrape during the drain still sees the worker.
  const metricsServer = await startMetricsServer(metrics.registry, config.METRICS_PORT, config.HOST);
  stops.push({ name: 'metrics listener', run: () => new Promise<void>((resolve) => metricsServer.close(() => resolve())) });
  stops.push((await runServiceWorker(deps, temporalAddress)).step);

  if (simulator && config.SIM_AUTO_REGISTER === '1') {
    const softphones = createSimulatedSoftphones(simulator, { logger: logger.child({ component: 'simulated-softphones' }) });
    deps.softphones = softphones;
    stops.push({ name: 'simulated softphones', run: () => Promise.resolve(softphones.stop()) });
  }
  const http = await startHttpServer(deps, metrics, config.PORT, config.HOST);
  stops.push({ name: 'http (stop accepting, close websockets, drain requests)', run: () => http.close(graceMs) });
  // The simulator reaches the directory as FreeSWITCH's mod_xml_curl would (gateway-url, gateway-credentials).
  simulator?.useDirectory(`http://127.0.0.1:${http.port}${SWITCH_DIRECTORY_PATH}`, `freeswitch:${config.SWITCH_DIRECTORY_TOKEN}`);

  const lines = [
    `dialer control plane ${SERVICE_VERSION} is up`,
    `  API          http://127.0.0.1:${http.port}  (health: /healthz, reference: /v1/docs)`,
    `  metrics      http://127.0.0.1:${(metricsServer.address() as AddressInfo).port}/metrics`,
    `  Temporal     ${temporalAddress} namespace ${config.TEMPORAL_NAMESPACE}, task queue ${config.TEMPORAL_TASK_QUEUE}`,
    `  Temporal UI  ${devServer?.uiUrl ?? '(external server: see its own UI)'}`,
    `  Switch       ${switchLabel}`,
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`start-up failed: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
