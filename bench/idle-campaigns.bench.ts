import { fork, type ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { ROOT_DIR, loadConfig } from '../src/config';
import { createLogger } from '../src/lib/logger';
import { createMetrics } from '../src/lib/metrics';
import { createDeps, startHttpServer } from '../src/runtime';
import { ensureTemporalBinary, freePort, readTemporalDevConfig, startTemporalDevServer } from '../src/platform/temporal-dev';
import { startSwitchSimulator } from '../src/switch/simulator';
import { CAMPAIGN_RUN_STATE_QUERY, CAMPAIGN_RUN_WAKE_SIGNAL, campaignRunWorkflowId, type CampaignRunState } from '../src/contracts/campaign-run';
import { api, argNumber, freshDatabase, machineLine } from './support';

/**
 * `npm run bench:idle`: what running campaigns with nothing to dial cost. Starts a Temporal dev
 * server, the switch simulator, the API (in this process) and the worker as its own process
 * (`workers/main.ts`), then measures the worker's CPU over a window with no campaign, starts N
 * progressive campaigns with no leads and no seats, and measures again; history events are read
 * from each run's describe(). Last, every run is woken once, which gives the events one tick adds.
 * Flags: --campaigns=100 --window=60 (seconds) --settle=15 (seconds after the starts).
 */
const campaigns = argNumber('campaigns', 100);
const windowS = argNumber('window', 60);
const settleS = argNumber('settle', 15);
const DATABASE_URL = process.env.BENCH_IDLE_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/dialer_bench_idle';
const CLOCK_TICKS_PER_S = 100;

/** user + system CPU seconds of a process, from /proc (Linux). */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_S;
}

async function cpuPercentOver(pid: number, seconds: number): Promise<number> {
  const before = cpuSeconds(pid);
  const started = Date.now();
  await new Promise((r) => setTimeout(r, seconds * 1000));
  return (100 * (cpuSeconds(pid) - before)) / ((Date.now() - started) / 1000);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function main(): Promise<void> {
  await freshDatabase(DATABASE_URL);
  const devConfig = readTemporalDevConfig();
  const binary = ensureTemporalBinary(path.join(ROOT_DIR, '.tools'), devConfig.cli, (m) => process.stderr.write(`${m}\n`));
  const temporal = await startTemporalDevServer({ binary, config: devConfig.server, port: await freePort(), dbFile: null, headless: true });
  const eslPassword = randomUUID();
  const sim = await startSwitchSimulator({ host: '127.0.0.1', port: 0, password: eslPassword });
  const adminToken = randomBytes(24).toString('hex');
  const env = {
    ...process.env,
    DATABASE_URL,
    ADMIN_API_TOKEN: adminToken,
    APP_ENCRYPTION_KEY: 'bench-key',
    LOG_LEVEL: 'warn',
    TEMPORAL_ADDRESS: temporal.address,
    TEMPORAL_NAMESPACE: temporal.namespace,
    ESL_HOST: '127.0.0.1',
    ESL_PORT: String(sim.port),
    ESL_PASSWORD: eslPassword,
    WORKER_METRICS_PORT: String(await freePort()),
    PORT: String(await freePort()),
  };
  Object.assign(process.env, env);
  const config = loadConfig();
  const connection = await Connection.connect({ address: temporal.address });
  const client = new Client({ connection, namespace: temporal.namespace });
  const deps = await createDeps(config, createLogger('warn'), client);
  const server = await startHttpServer(deps, createMetrics(), config.PORT, '127.0.0.1');

  const worker: ChildProcess = fork(path.join(ROOT_DIR, 'workers', 'main.ts'), [], { execArgv: ['--import', 'tsx'], env, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const stopAll = async () => {
    worker.kill('SIGTERM');
    await new Promise((r) => worker.once('exit', r));
    await server.close();
    await deps.db.close();
    await connection.close();
    await sim.stop();
    await temporal.stop();
  };
  try {
    const created = await api(server.port, 'POST', '/v1/admin/tenants', adminToken, {
      name: `bench-idle-${randomUUID().slice(0, 8)}`,
      admin: { name: 'Bench', email: `bench-${randomUUID().slice(0, 8)}@example.com` },
    });
    if (created.status !== 201) throw new Error(`provisioning failed: ${created.status}`);
    const key: string = created.body.api_key.token;
    const tenantId: string = created.body.tenant.id;

    // The worker is up once a probe campaign's run has ticked; it is stopped before the baseline.
    const probe = await api(server.port, 'POST', '/v1/campaigns', key, { name: 'probe', campaign_type: 'progressive' });
    await api(server.port, 'POST', `/v1/campaigns/${probe.body.campaign.id}/start`, key);
    const probeHandle = client.workflow.getHandle(campaignRunWorkflowId(tenantId, probe.body.campaign.id));
    for (let i = 0; ; i += 1) {
      const state = await probeHandle.query<CampaignRunState>(CAMPAIGN_RUN_STATE_QUERY).catch(() => null);
      if (state && state.tick >= 1) break;
      if (i > 600) throw new Error('the worker did not start ticking within 60 s');
      await sleep(100);
    }
    await api(server.port, 'POST', `/v1/campaigns/${probe.body.campaign.id}/stop`, key);
    await sleep(2000);

    const workerPid = worker.pid!;
    const baseline = await cpuPercentOver(workerPid, windowS);

    const ids: string[] = [];
    for (let i = 0; i < campaigns; i += 1) {
      const c = await api(server.port, 'POST', '/v1/campaigns', key, { name: `idle-${i}`, campaign_type: 'progressive' });
      if (c.status !== 201) throw new Error(`campaign create: ${c.status}`);
      const started = await api(server.port, 'POST', `/v1/campaigns/${c.body.campaign.id}/start`, key);
      if (started.status !== 200) throw new Error(`campaign start: ${started.status}`);
      ids.push(c.body.campaign.id);
    }
    const handles = ids.map((id) => client.workflow.getHandle(campaignRunWorkflowId(tenantId, id)));
    await sleep(settleS * 1000);

    const snapshot = async () =>
      Promise.all(
        handles.map(async (h) => {
          const [d, s] = await Promise.all([h.describe(), h.query<CampaignRunState>(CAMPAIGN_RUN_STATE_QUERY)]);
          return { events: d.historyLength, tick: s.tick, waiting: s.waiting?.kind ?? 'cadence' };
        }),
      );
    const before = await snapshot();
    const loaded = await cpuPercentOver(workerPid, windowS);
    const after = await snapshot();
    const events = after.reduce((n, a, i) => n + a.events - before[i]!.events, 0);
    const ticks = after.reduce((n, a, i) => n + a.tick - before[i]!.tick, 0);

    // One wake per run: the events a single (idle) tick costs, whatever the loop's cadence.
    const woken = await snapshot();
    await Promise.all(handles.map((h) => h.signal(CAMPAIGN_RUN_WAKE_SIGNAL)));
    await sleep(5000);
    const afterWake = await snapshot();
    const wakeEvents = afterWake.reduce((n, a, i) => n + a.events - woken[i]!.events, 0);
    const wakeTicks = afterWake.reduce((n, a, i) => n + a.tick - woken[i]!.tick, 0);

    const summary = {
      bench: 'idle running campaigns (progressive, no leads, no seats)',
      machine: machineLine(),
      campaigns,
      window_s: windowS,
      worker_cpu_percent: { no_campaigns: round(baseline), with_campaigns: round(loaded), per_campaign: round((loaded - baseline) / campaigns, 4) },
      history_events_per_campaign_per_idle_hour: round(((events / campaigns) * 3600) / windowS, 1),
      ticks_per_campaign_per_idle_hour: round(((ticks / campaigns) * 3600) / windowS, 1),
      history_events_per_woken_tick: wakeTicks ? round(wakeEvents / wakeTicks, 2) : null,
      waiting: Object.fromEntries([...new Set(after.map((a) => a.waiting))].map((k) => [k, after.filter((a) => a.waiting === k).length])),
    };
    process.stdout.write(`${JSON.stringify(summary, null, 2)}\n`);
  } finally {
    await stopAll();
  }
}

function round(n: number, places = 2): number {
  const f = 10 ** places;
  return Math.round(n * f) / f;
}

main().catch((err: unknown) => {
  process.stderr.write(`bench failed: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
