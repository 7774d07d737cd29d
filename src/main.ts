import { randomBytes } from 'node:crypto';
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { loadConfig, ROOT_DIR, SERVICE_VERSION } from './config';
import { prepareDatabase } from './db/migrate';
import { checkServerSettings } from './db/server-settings';
import { createLogger } from './lib/logger';
import { startMetricsServer } from './lib/metrics';
import { SWITCH_DIRECTORY_PATH } from './modules/switch-directory/switch-directory.routes';
import { switchRecordingsDir } from './modules/recordings/recording-capture.service';
import { SIMULATED_SOFTPHONES_ENV } from './platform/child-process';
import { provideDatabase } from './platform/embedded-postgres';
import { ClusterMetricsRegistry, ProcessGroup } from './platform/supervisor';
import { ensureTemporalBinary, freePort, readTemporalDevConfig, startTemporalDevServer, type DevServer } from './platform/temporal-dev';
import { onShutdownSignals, resolveEncryptionKey, type ShutdownStep } from './runtime';
import { startSwitchSimulator, type SwitchSimulator } from './switch/simulator';

/**
 * `npm start`, the supervisor: the database (an embedded PostgreSQL when there is none),
 * migrations, an embedded Temporal dev server unless TEMPORAL_ADDRESS is given, the switch
 * simulator unless ESL_HOST is given, then WORKER_PROCESSES worker processes and API_PROCESSES API
 * processes (src/platform/supervisor.ts) and one metrics listener for all of them. In the
 * foreground until SIGINT/SIGTERM, which stops them in reverse order: the API processes first (no
 * new work arrives while the rest stops), then the workers, then what they used.
 */
const config = loadConfig();
const logger = createLogger(config.LOG_LEVEL, { role: 'supervisor' });
const graceMs = config.SHUTDOWN_GRACE_MS;
// Filled as start-up goes; a signal mid-way stops what has started, the newest first.
const stops: ShutdownStep[] = [];
// Each child forces its own exit after the grace plus 10 s; this leaves room for that and for the
// simulator, the Temporal dev server and the database to stop after the children.
const stop = onShutdownSignals(logger, graceMs, () => [...stops].reverse(), { marginMs: 25_000 });

const WORKER_ENTRY = path.join(ROOT_DIR, 'workers', 'main.ts');
const API_ENTRY = path.join(ROOT_DIR, 'src', 'api.ts');

/** Bundled once here rather than by each worker process, so a restarted worker polls within seconds. */
async function bundleWorkflows(): Promise<string> {
  const { bundleWorkflowCode, DefaultLogger } = await import('@temporalio/worker');
  const bundle = await bundleWorkflowCode({ workflowsPath: path.join(ROOT_DIR, 'workflows', 'index.ts'), logger: new DefaultLogger('WARN') });
  const dir = path.join(config.DATA_DIR, 'run');
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, 'workflow-bundle.js');
  // Renamed into place: a start beside this one (same DATA_DIR) never reads half a file.
  const partial = `${file}.${process.pid}`;
  writeFileSync(partial, bundle.code);
  renameSync(partial, file);
  return file;
}

async function main(): Promise<void> {
  if (config.egressAllowlist.length) {
    logger.warn({ origins: config.egressAllowlist }, 'EGRESS_ALLOWLIST exempts these origins from the public-address and https-443 checks');
  }

  const database = await provideDatabase(config, logger.child({ component: 'postgres' }));
  const embedded = database.embedded;
  if (embedded) stops.push({ name: 'embedded postgresql', run: () => embedded.stop(), force: () => embedded.kill() });
  const migrations = await prepareDatabase(database.ownerUrl);
  if (embedded) await embedded.secureAppRole();
  logger.info({ applied: migrations.applied, already_applied: migrations.alreadyApplied }, 'database ready');
  for (const warning of await checkServerSettings(database.appUrl)) logger.warn(warning, 'database server setting');
  // Made here, before the children race to create it.
  resolveEncryptionKey(config, logger);

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

  // The switch: FreeSWITCH when ESL_HOST is given, else the bundled simulator on loopback, which
  // every API and worker process reaches over its own switch link.
  let eslTarget = { host: config.ESL_HOST ?? '', port: config.ESL_PORT ?? 8021, password: config.ESL_PASSWORD ?? 'ClueCon' };
  let switchLabel = `FreeSWITCH at ${eslTarget.host}:${eslTarget.port}`;
  let simulator: SwitchSimulator | null = null;
  let directoryToken = config.SWITCH_DIRECTORY_TOKEN;
  if (!config.ESL_HOST) {
    // The embedded simulator authenticates to the directory like FreeSWITCH would; without a
    // configured token this start makes one up for the two of them.
    directoryToken ??= randomBytes(24).toString('hex');
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

  // The AI hears the consumer through a worker's audio gateway (docs/ai-calls.md). With the bundled
  // simulator each worker gets its own on loopback, so an ai_voice call works out of the box; a
  // FreeSWITCH deployment names its gateway URL (AI_AUDIO_WS_URL) itself.
  const audioGateways: Array<Record<string, string>> = [];
  if (simulator && !config.AI_AUDIO_WS_URL) {
    const secret = config.AI_AUDIO_SECRET ?? randomBytes(24).toString('hex');
    for (let i = 0; i < config.WORKER_PROCESSES; i += 1) {
      const port = await freePort();
      audioGateways.push({ AI_AUDIO_WS_PORT: String(port), AI_AUDIO_WS_URL: `ws://127.0.0.1:${port}`, AI_AUDIO_SECRET: secret });
    }
  }

  const workflowBundle = config.WORKFLOW_BUNDLE_PATH ?? (config.WORKER_PROCESSES > 0 ? await bundleWorkflows() : undefined);
  const shared: Record<string, string> = {
    DATABASE_URL: database.ownerUrl,
    APP_DATABASE_URL: database.appUrl,
    TEMPORAL_ADDRESS: temporalAddress,
    ESL_HOST: eslTarget.host,
    ESL_PORT: String(eslTarget.port),
    ESL_PASSWORD: eslTarget.password,
    ...(directoryToken ? { SWITCH_DIRECTORY_TOKEN: directoryToken } : {}),
  };

  const metricsServer = await startMetricsServer(new ClusterMetricsRegistry(), config.METRICS_PORT, config.HOST);
  stops.push({ name: 'metrics listener', run: () => new Promise<void>((resolve) => metricsServer.close(() => resolve())) });
  const group = new ProcessGroup(logger, (why) => stop(why, true));
  // Pushed before either starts, so a signal during start-up stops both, API processes first.
  stops.push(group.shutdownStep('worker', 'worker processes (in-flight activities finish or are cancelled)'));
  stops.push(group.shutdownStep('api', 'api processes (stop accepting, close websockets, drain requests)'));
  const [, apis] = await Promise.all([
    group.start(
      {
        role: 'worker',
        exec: WORKER_ENTRY,
        // The SDK's exporter binds one address: the first worker's.
        env: (i) => ({
          ...shared,
          ...(workflowBundle ? { WORKFLOW_BUNDLE_PATH: workflowBundle } : {}),
          ...(i > 1 ? { TEMPORAL_SDK_METRICS_ADDRESS: '' } : {}),
          ...audioGateways[i - 1],
        }),
      },
      config.WORKER_PROCESSES,
    ),
    group.start(
      {
        role: 'api',
        exec: API_ENTRY,
        env: () => ({ ...shared, ...(simulator && config.SIM_AUTO_REGISTER === '1' ? { [SIMULATED_SOFTPHONES_ENV]: '1' } : {}) }),
      },
      config.API_PROCESSES,
    ),
  ]);
  const port = apis[0]!.port!;
  // The simulator reaches the directory as FreeSWITCH's mod_xml_curl would (gateway-url, gateway-credentials).
  simulator?.useDirectory(`http://127.0.0.1:${port}${SWITCH_DIRECTORY_PATH}`, `freeswitch:${directoryToken}`);

  const databaseAddress = embedded ? `embedded PostgreSQL on ${config.LOCAL_DATABASE_ADDRESS} (data in ${path.join(config.DATA_DIR, 'postgres')})` : new URL(database.ownerUrl).host;
  const workerPids = group.pids('worker');
  const lines = [
    `dialer control plane ${SERVICE_VERSION} is up`,
    `  API          http://127.0.0.1:${port}  (health: /healthz, reference: /v1/docs)`,
    `  processes    ${apis.length} API (pid ${group.pids('api').join(', ')}), ${workerPids.length} worker${workerPids.length === 1 ? '' : 's'}${workerPids.length ? ` (pid ${workerPids.join(', ')})` : ''}; supervisor pid ${process.pid}`,
    `  metrics      http://127.0.0.1:${(metricsServer.address() as AddressInfo).port}/metrics`,
    `  Temporal     ${temporalAddress} namespace ${config.TEMPORAL_NAMESPACE}, task queue ${config.TEMPORAL_TASK_QUEUE}`,
    `  Temporal UI  ${devServer?.uiUrl ?? '(external server: see its own UI)'}`,
    `  Switch       ${switchLabel}`,
    `  Database     ${databaseAddress}`,
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}

main().catch((err: unknown) => {
  logger.error({ err }, 'start-up failed');
  process.stderr.write(`start-up failed: ${(err as Error).stack ?? String(err)}\n`);
  // What did start stops through the ordinary path, then the exit is 1.
  stop('start-up failed', true);
});
