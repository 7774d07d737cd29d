import { randomUUID } from 'node:crypto';
import os from 'node:os';
import JSZip from 'jszip';
import { daytimePrefix, numberEnding, seatAgents, seedLeads } from '../../test/helpers/dial-loop';
import type { ProvisionedTenant, TestApp } from '../../test/helpers/harness';
import type { SoftphoneRegistration } from '../../src/switch/simulator';
import type { SwitchRig } from '../../test/helpers/dial-loop';
import { seedRecording, sha256Hex, tinyWav, type SeededRecording } from '../../test/helpers/recordings';
import { ADMIN_TOKEN, check, kill, log, Rig, waitFor, type Check } from './harness';

const LEADS = 20;
const SCENARIO_TIMEOUT_MS = 240_000;

interface Attempt {
  id: string;
  debt_id: string;
  call_uuid: string | null;
  corrects_id: string | null;
  ended_at: Date | null;
  disposition: string | null;
  inserted_at: Date;
}

async function provision(rig: Rig): Promise<ProvisionedTenant> {
  const res = await rig.request('POST', '/v1/admin/tenants', {
    token: ADMIN_TOKEN,
    body: { name: `fault-${randomUUID()}`, admin: { name: 'Admin', email: `admin-${randomUUID()}@example.com` } },
  });
  if (res.status !== 201) throw new Error(`provision tenant: ${res.status} ${res.text}`);
  const body = res.body as { tenant: { id: string; name: string }; api_key: { token: string }; admin_agent: { id: string } };
  return { tenantId: body.tenant.id, apiKey: body.api_key.token, adminAgentId: body.admin_agent.id, name: body.tenant.name };
}

/** The seeding helpers want a TestApp and a SwitchRig; they only touch deps.db and sim.register. */
function asApp(rig: Rig): TestApp {
  return { deps: rig.deps, baseUrl: `http://127.0.0.1:${rig.apiPort}`, request: (method, p, opts) => rig.request(method, p, opts) } as TestApp;
}
function asSwitch(rig: Rig): SwitchRig {
  return { sim: { register: (reg: SoftphoneRegistration) => rig.register(reg), useDirectory: () => undefined } } as unknown as SwitchRig;
}

interface DeliveryRow {
  id: string;
  event_id: string;
  status: string;
}

/**
 * Outbound webhooks across the fault: every call's end was announced (call.ended names the final
 * row), every delivery reached the runner's receiver, and the receiver never got one event under
 * two delivery ids. The same delivery arriving again (the worker died between the receiver's 200
 * and recording it) is at-least-once by design and deduplicated on X-DD-Delivery-Id; it is counted.
 */
async function webhookChecks(rig: Rig, checks: Check[], endpointId: string, rows: Attempt[]): Promise<void> {
  const originals = rows.filter((r) => r.corrects_id === null);
  const endedRows = (id: string) => rows.filter((r) => r.corrects_id === id && r.ended_at !== null).map((r) => r.id);
  const deliveries = () => rig.sql<DeliveryRow>('SELECT id, event_id, status FROM webhook_deliveries WHERE endpoint_id = $1', [endpointId]);
  const announced = (ds: DeliveryRow[]) => {
    const events = new Set(ds.map((d) => d.event_id));
    return originals.filter((o) => endedRows(o.id).some((id) => events.has(id))).length;
  };
  const settled = await waitFor(
    async () => {
      const ds = await deliveries();
      return announced(ds) === originals.length && ds.every((d) => d.status === 'delivered') ? ds : undefined;
    },
    90_000,
    'every call.ended delivered',
  ).catch(async (err: Error) => {
    log(`  ${err.message}`);
    return deliveries();
  });
  check(checks, 'every call announced as call.ended', announced(settled) === originals.length, `${announced(settled)}/${originals.length} calls, ${settled.length} deliveries`);
  const ids = new Set(settled.map((d) => d.id));
  const got = rig.received.filter((r) => ids.has(r.deliveryId));
  const reached = new Set(got.map((r) => r.deliveryId));
  const statuses = new Map<string, number>();
  for (const d of settled) statuses.set(d.status, (statuses.get(d.status) ?? 0) + 1);
  check(
    checks,
    'every delivery delivered and received by the endpoint',
    settled.every((d) => d.status === 'delivered' && reached.has(d.id)),
    `${reached.size}/${settled.length} received; ${[...statuses].map(([s, n]) => `${s}=${n}`).join(' ')}`,
  );
  const deliveriesPerEvent = new Map<string, Set<string>>();
  for (const r of got) deliveriesPerEvent.set(r.eventId, (deliveriesPerEvent.get(r.eventId) ?? new Set()).add(r.deliveryId));
  check(
    checks,
    'no event delivered twice under different delivery ids',
    [...deliveriesPerEvent.values()].every((s) => s.size === 1),
    `${got.length - reached.size} repeated attempt(s) of a delivery (same X-DD-Delivery-Id)`,
  );
}

/**
 * One progressive campaign of LEADS leads; `fault` runs once a few attempts exist, then the
 * common checks: one attempt per debt, each placed at most once, every one ended, nothing placed
 * unrecorded, a call lost between record and dial closed as reaped rather than dialed again.
 */
async function campaignScenario(rig: Rig, checks: Check[], fault: (campaignId: string, tenant: ProvisionedTenant) => Promise<void>): Promise<void> {
  const tenant = await provision(rig);
  await seatAgents(asApp(rig), asSwitch(rig), tenant, 3);
  const hook = await rig.request('POST', '/v1/webhooks', { token: tenant.apiKey, body: { url: `${rig.receiverOrigin}/hooks/${tenant.tenantId}`, events: ['call.ended'] } });
  if (hook.status !== 201) throw new Error(`register webhook: ${hook.status} ${hook.text}`);
  const endpointId = (hook.body as { webhook: { id: string } }).webhook.id;
  const campaign = await rig.request('POST', '/v1/campaigns', { token: tenant.apiKey, body: { name: `fault-${randomUUID()}`, campaign_type: 'progressive' } });
  const campaignId = (campaign.body as CampaignEnvelope).campaign.id;
  const prefix = daytimePrefix();
  const debtIds = await seedLeads(asApp(rig), tenant, campaignId, Array.from({ length: LEADS }, (_, i) => numberEnding(prefix, i, 10 + i)));
  const started = await rig.request('POST', `/v1/campaigns/${campaignId}/start`, { token: tenant.apiKey, body: { tick_ms: 200, batch_size: 5, call_ttl_ms: 8000 } });
  if (started.status !== 200) throw new Error(`start campaign: ${started.status} ${started.text}`);
  const attempts = () => rig.sql<Attempt>('SELECT id, debt_id, call_uuid, corrects_id, ended_at, disposition, inserted_at FROM call_attempts WHERE campaign_id = $1', [campaignId]);
  const originals = async () => (await attempts()).filter((a) => a.corrects_id === null);
  await waitFor(async () => ((await originals()).length >= 6 ? true : undefined), 60_000, 'six attempts before the fault');
  const before = (await originals()).length;
  const faultAt = Date.now();
  await fault(campaignId, tenant);
  log(`  fault injected with ${before}/${LEADS} leads attempted (${Date.now() - faultAt} ms)`);
  check(checks, 'fault hit mid-campaign', before < LEADS, `${before} of ${LEADS} attempted before the fault`);

  const rows = await waitFor(
    async () => {
      const all = await attempts();
      const orig = all.filter((r) => r.corrects_id === null);
      const final = new Set(all.filter((r) => r.corrects_id !== null && r.ended_at !== null).map((r) => r.corrects_id));
      return orig.length >= LEADS && orig.every((o) => final.has(o.id)) ? all : undefined;
    },
    150_000,
    'every lead attempted and finished',
  ).catch(async (err: Error) => {
    log(`  ${err.message}`);
    return attempts();
  });
  log(`  recovered: all leads settled ${((Date.now() - faultAt) / 1000).toFixed(1)} s after the fault`);
  const orig = rows.filter((r) => r.corrects_id === null);
  const finalOf = (id: string) =>
    rows.filter((r) => r.corrects_id === id && r.ended_at !== null).sort((a, b) => a.inserted_at.getTime() - b.inserted_at.getTime())[0];
  const perDebt = new Map<string, number>();
  for (const o of orig) perDebt.set(o.debt_id, (perDebt.get(o.debt_id) ?? 0) + 1);
  check(checks, 'every lead attempted', debtIds.every((d) => perDebt.has(d)), `${perDebt.size}/${LEADS} debts`);
  check(checks, 'exactly one attempt per debt', [...perDebt.values()].every((n) => n === 1) && orig.length === LEADS, `${orig.length} original rows`);
  const unended = orig.filter((o) => !finalOf(o.id));
  check(checks, 'every attempt has a final CDR row', unended.length === 0, `${unended.length} without one`);
  const recorded = new Set(orig.map((o) => o.call_uuid));
  const mine = [...rig.created.entries()].filter(([uuid]) => recorded.has(uuid));
  const doubled = mine.filter(([, n]) => n > 1);
  check(checks, 'no call placed twice on the switch', doubled.length === 0, `${mine.length} placed, ${doubled.length} more than once`);
  const unsent = orig.filter((o) => !rig.created.has(o.call_uuid!));
  const unsentDispositions = unsent.map((o) => finalOf(o.id)?.disposition ?? 'none');
  check(
    checks,
    'recorded-but-unplaced calls closed as reaped/not_placed, never redialed',
    unsentDispositions.every((d) => d === 'reaped' || d === 'not_placed'),
    `${unsent.length} unplaced: ${unsentDispositions.join(',') || '-'}`,
  );
  const dispositions = new Map<string, number>();
  for (const o of orig) {
    const d = finalOf(o.id)?.disposition ?? 'none';
    dispositions.set(d, (dispositions.get(d) ?? 0) + 1);
  }
  log(`  final dispositions: ${[...dispositions].map(([d, n]) => `${d}=${n}`).join(' ')}`);
  await webhookChecks(rig, checks, endpointId, rows);
  const state = await rig.request('GET', `/v1/campaigns/${campaignId}`, { token: tenant.apiKey });
  const runState = (state.body as Partial<CampaignEnvelope> | null)?.campaign?.state;
  check(checks, 'REST answers and the run is running or completed', state.status === 200 && (runState === 'running' || runState === 'completed'), `status ${state.status}, state ${runState}`);
  await rig.request('POST', `/v1/campaigns/${campaignId}/stop`, { token: tenant.apiKey });
}

const EXPORT_RECORDINGS = 24;
// The export activity's heartbeat timeout (1 min) plus its first retry interval, with margin: the
// retry on the restarted worker gets its chance before the run falls back to a stale release.
const EXPORT_RESUME_WAIT_MS = 100_000;
// Big enough that streaming the archive takes a few seconds on two cores, so the kill lands mid-run.
const EXPORT_WAV_SAMPLES = 1_500_000;

interface CampaignEnvelope {
  campaign: { id: string; state: string };
}

interface ExportEnvelope {
  export: { job_id: string; status: string; error: string | null; row_count: number | null; url: string | null };
}

interface ExportRow {
  id: string;
  status: string;
  error: string | null;
  row_count: number | null;
  claimed_at: Date | null;
}

/**
 * A recording export whose worker dies while the archive streams: the job either finishes on the
 * restarted worker (Temporal retries the activity once its heartbeat times out), or is released as stale once its heartbeat is older than
 * RECORDING_EXPORT_CLAIM_STALE_SECONDS and a new request succeeds; the archive holds every recording.
 */
async function exportDuringWorkerKill(rig: Rig, checks: Check[]): Promise<void> {
  const tenant = await provision(rig);
  const seeded: SeededRecording[] = [];
  for (let i = 0; i < EXPORT_RECORDINGS; i += 1) {
    seeded.push(
      await seedRecording(asApp(rig), tenant.tenantId, {
        phone: `+1212555${String(1000 + i)}`,
        startedAt: new Date(Date.now() - (i + 1) * 60_000),
        audio: tinyWav(i, EXPORT_WAV_SAMPLES),
      }),
    );
  }
  log(`  seeded ${EXPORT_RECORDINGS} recordings of ${(tinyWav(0, EXPORT_WAV_SAMPLES).length / 1e6).toFixed(1)} MB`);
  const exportRow = async (id: string) =>
    (await rig.sql<ExportRow>('SELECT id, status, error, row_count, claimed_at FROM recording_exports WHERE id = $1', [id]))[0];
  const post = (body: Record<string, unknown>) => rig.request('POST', '/v1/recording-exports', { token: tenant.apiKey, body });
  const first = await post({});
  check(checks, 'export accepted', first.status === 202, `status ${first.status}`);
  const jobId = (first.body as ExportEnvelope).export.job_id;
  await waitFor(async () => ((await exportRow(jobId))?.status === 'running' ? true : undefined), 60_000, 'the export to be claimed');
  const killedAt = Date.now();
  await kill(rig.worker);
  const atKill = await exportRow(jobId);
  log(`  worker killed with the job ${atKill?.status}`);
  check(checks, 'worker killed while the export was running', atKill?.status === 'running', `status at kill ${atKill?.status}`);
  rig.startWorker();

  const settled = await waitFor(
    async () => {
      const row = await exportRow(jobId);
      return row && (row.status === 'done' || row.status === 'failed') ? row : undefined;
    },
    EXPORT_RESUME_WAIT_MS,
    'the killed job to finish on the new worker',
  ).catch(() => undefined);
  let finalId = jobId;
  if (settled?.status === 'done') {
    log(`  the job finished on the restarted worker ${((Date.now() - killedAt) / 1000).toFixed(1)} s after the kill`);
  } else {
    log(`  the job is ${settled?.status ?? (await exportRow(jobId))?.status} (${settled?.error ?? 'no error'}); requesting again`);
    const retry = await waitFor(
      async () => {
        const res = await post({ refresh: true });
        return res.status === 202 || res.status === 200 ? res : undefined;
      },
      60_000,
      'a new export request to be accepted once the stale claim is released',
    );
    finalId = (retry.body as ExportEnvelope).export.job_id;
    const released = await exportRow(jobId);
    check(checks, 'the dead job was released as stale', released?.status === 'failed' && released.error === 'stale claim released', `${released?.status}: ${released?.error}`);
  }
  const done = await waitFor(
    async () => {
      const job = ((await rig.request('GET', `/v1/recording-exports/${finalId}`, { token: tenant.apiKey })).body as Partial<ExportEnvelope> | null)?.export;
      return job && (job.status === 'done' || job.status === 'failed') ? job : undefined;
    },
    120_000,
    'the export to end',
  );
  check(checks, 'the export ends done', done.status === 'done', `status ${done.status}, error ${done.error}, ${((Date.now() - killedAt) / 1000).toFixed(1)} s after the kill`);
  check(checks, 'row_count covers every recording', done.row_count === EXPORT_RECORDINGS, `row_count ${done.row_count}`);
  const file = await fetch(String(done.url));
  const bytes = Buffer.from(await file.arrayBuffer());
  check(checks, 'the archive downloads', file.status === 200, `status ${file.status}, ${(bytes.length / 1e6).toFixed(1)} MB`);
  const zip = await JSZip.loadAsync(bytes);
  let intact = 0;
  for (const r of seeded) {
    const entry = zip.file(`recordings/${r.callUuid}.wav`);
    if (entry && sha256Hex(Buffer.from(await entry.async('uint8array'))) === sha256Hex(r.audio!)) intact += 1;
  }
  check(checks, 'the archive is complete (every WAV present, byte-identical)', intact === EXPORT_RECORDINGS, `${intact}/${EXPORT_RECORDINGS}`);
  const manifest = (await zip.file('manifest.csv')?.async('string'))?.split('\r\n').filter(Boolean) ?? [];
  check(checks, 'the manifest lists every recording once', manifest.length === EXPORT_RECORDINGS + 1, `${manifest.length - 1} rows`);
  const jobs = await rig.sql<{ status: string; n: string }>('SELECT status, count(*) AS n FROM recording_exports WHERE tenant_id = $1 GROUP BY status', [tenant.tenantId]);
  log(`  export jobs of the tenant: ${jobs.map((j) => `${j.status}=${j.n}`).join(' ')}`);
  check(checks, 'no job left generating', jobs.every((j) => j.status === 'done' || j.status === 'failed'));
}

const scenarios: Record<string, (rig: Rig, checks: Check[]) => Promise<void>> = {
  async workerKill(rig, checks) {
    await campaignScenario(rig, checks, async () => {
      await kill(rig.worker);
      rig.startWorker();
    });
  },
  async apiKill(rig, checks) {
    await campaignScenario(rig, checks, async (campaignId) => {
      await kill(rig.api);
      const count = async () => (await rig.sql<{ n: string }>('SELECT count(*) AS n FROM call_attempts WHERE campaign_id = $1 AND corrects_id IS NULL', [campaignId]))[0]!.n;
      const atKill = Number(await count());
      const downAt = Date.now();
      const whileDown = await waitFor(async () => {
        const n = Number(await count());
        return n > atKill ? n : undefined;
      }, 30_000, 'a new attempt while the API is down').catch(() => atKill);
      check(checks, 'dialing continues while the API is down', whileDown > atKill, `${atKill} -> ${whileDown} attempts within ${Date.now() - downAt} ms without the API`);
      await rig.startApi();
    });
  },
  async temporalRestart(rig, checks) {
    await campaignScenario(rig, checks, async () => {
      await rig.temporal.stop();
      await rig.startTemporal();
    });
  },
  async temporalKill(rig, checks) {
    await campaignScenario(rig, checks, async () => {
      await rig.killTemporal();
      await rig.startTemporal();
    });
  },
  async postgresRestart(rig, checks) {
    await campaignScenario(rig, checks, () => {
      rig.pgCtl('restart');
      return Promise.resolve();
    });
  },
  exportWorkerKill: exportDuringWorkerKill,
  async eslDrop(rig, checks) {
    await campaignScenario(rig, checks, async () => {
      const inFlight = rig.sim.channels().length;
      await rig.sim.stop();
      await rig.startSim();
      log(`  simulator restarted on the same port, ${inFlight} channels were up at the drop`);
      await waitFor(() => Promise.resolve(rig.sim.connectionCount() >= 2 ? true : undefined), 30_000, 'the API and the worker to reconnect ESL');
      check(checks, 'ESL links reconnected without manual steps', true, `${rig.sim.connectionCount()} connections`);
    });
  },
};

async function main(): Promise<void> {
  const wanted = process.argv.slice(2);
  const names = wanted.length ? wanted : Object.keys(scenarios);
  const rig = new Rig();
  const results: Array<{ name: string; ms: number; checks: Check[]; error?: string }> = [];
  try {
    log(`fault run on ${process.platform} ${os.cpus().length} cores, node ${process.version}`);
    await rig.start();
    for (const name of names) {
      const run = scenarios[name];
      if (!run) throw new Error(`unknown scenario ${name}; known: ${Object.keys(scenarios).join(', ')}`);
      log(`== scenario ${name}`);
      const checks: Check[] = [];
      const started = Date.now();
      let error: string | undefined;
      let timer: NodeJS.Timeout | undefined;
      try {
        await Promise.race([
          run(rig, checks),
          new Promise((_, reject) => {
            timer = setTimeout(() => reject(new Error(`scenario timed out after ${SCENARIO_TIMEOUT_MS} ms`)), SCENARIO_TIMEOUT_MS);
          }),
        ]);
      } catch (err) {
        error = (err as Error).message;
        check(checks, 'scenario completed', false, error);
        log(`  worker log tail: ${rig.tail('worker').slice(-1500)}`);
      } finally {
        clearTimeout(timer);
      }
      results.push({ name, ms: Date.now() - started, checks, error });
      log(`== ${name}: ${checks.every((c) => c.ok) ? 'PASS' : 'FAIL'} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    }
  } finally {
    await rig.close();
  }
  log('summary');
  for (const r of results) log(`  ${r.checks.every((c) => c.ok) ? 'PASS' : 'FAIL'} ${r.name} (${(r.ms / 1000).toFixed(1)} s, ${r.checks.length} checks)`);
  process.exitCode = results.every((r) => r.checks.every((c) => c.ok)) && results.length === names.length ? 0 : 1;
}

main().catch((err: unknown) => {
  log(`fault run aborted: ${(err as Error).stack ?? String(err)}`);
  process.exitCode = 1;
});
