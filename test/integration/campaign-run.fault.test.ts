import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { smokeWorkflow } from '../../workflows';
import path from 'node:path';
import { ROOT_DIR } from '../../src/config';
import { withTenant } from '../../src/lib/tenancy';
import { header } from '../../src/switch/simulator/protocol';
import { daytimePrefix, numberEnding, seatAgents, seedLeads, startSwitchRig, waitFor, type SwitchRig } from '../helpers/dial-loop';
import { provisionTenant, startTestApp, testEnv, type TestApp } from '../helpers/harness';

jest.setTimeout(180_000);

const LEADS = 24;
const taskQueue = `dial-fault-${randomUUID()}`;
let rig: SwitchRig;
let app: TestApp;
const workers: ChildProcess[] = [];

/** `npm run worker` as its own process: the thing an SRE's host loses when it dies. */
function spawnWorker(): ChildProcess {
  const env = testEnv({
    TEMPORAL_TASK_QUEUE: taskQueue,
    ESL_HOST: '127.0.0.1',
    ESL_PORT: String(rig.sim.port),
    ESL_PASSWORD: rig.sim.password,
    WORKFLOW_BUNDLE_PATH: process.env.TEST_WORKFLOW_BUNDLE,
    LOG_LEVEL: 'warn',
  });
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT_DIR, 'workers/main.ts')], { cwd: ROOT_DIR, env, stdio: ['ignore', 'ignore', 'pipe'] });
  child.stderr?.on('data', () => undefined);
  workers.push(child);
  return child;
}

function kill(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}

beforeAll(async () => {
  rig = await startSwitchRig({ ringMs: 150, talkMs: 1200 });
  app = await startTestApp({ TEMPORAL_TASK_QUEUE: taskQueue });
});
afterAll(async () => {
  for (const w of workers) await kill(w);
  await app?.close();
  await rig?.close();
});

describe('a worker killed mid-campaign', () => {
  it('resumes on a new worker with no lost and no duplicate attempt', async () => {
    // Every consumer leg the switch creates, by call uuid: what was really placed.
    const created = new Map<string, number>();
    const stopWatching = rig.sim.onEvent((ev) => {
      if (ev.name !== 'CHANNEL_CREATE' || !header(ev, 'variable_dd_call_attempt_id')) return;
      const uuid = header(ev, 'Unique-ID')!;
      created.set(uuid, (created.get(uuid) ?? 0) + 1);
    });

    // The worker relays the switch's registration events: it runs (a workflow it hosts has
    // completed) before the seats register.
    const tenant = await provisionTenant(app);
    const first = spawnWorker();
    await app.deps.temporal!.workflow.execute(smokeWorkflow, { taskQueue, workflowId: `smoke-${randomUUID()}`, args: [{ tenantId: tenant.tenantId }] });
    const agents = await seatAgents(app, rig, tenant, 3);
    const campaign = await app.request('POST', '/v1/campaigns', { token: tenant.apiKey, body: { name: `fault-${randomUUID()}`, campaign_type: 'progressive' } });
    const campaignId: string = campaign.body.campaign.id;
    const prefix = daytimePrefix();
    const debtIds = await seedLeads(
      app,
      tenant,
      campaignId,
      Array.from({ length: LEADS }, (_, i) => numberEnding(prefix, i, 10 + i)),
    );

    const started = await app.request('POST', `/v1/campaigns/${campaignId}/start`, {
      token: tenant.apiKey,
      body: { tick_ms: 200, batch_size: 5, call_ttl_ms: 8000 },
    });
    expect(started.status).toBe(200);

    const originals = () =>
      withTenant(app.deps.db, tenant.tenantId, (tx) => tx.callAttempt.findMany({ where: { campaignId, correctsId: null } }));
    await waitFor(async () => ((await originals()).length >= 6 ? true : undefined), 60_000, 'six attempts before the kill');
    await kill(first);
    const atKill = (await originals()).length;
    expect(atKill).toBeLessThan(LEADS);

    spawnWorker();
    const finished = await waitFor(
      async () => {
        const rows = await withTenant(app.deps.db, tenant.tenantId, (tx) => tx.callAttempt.findMany({ where: { campaignId } }));
        const orig = rows.filter((r) => r.correctsId === null);
        const final = new Set(rows.filter((r) => r.correctsId !== null && r.endedAt !== null).map((r) => r.correctsId));
        return orig.length === LEADS && orig.every((o) => final.has(o.id)) ? { orig, rows } : undefined;
      },
      150_000,
      'every lead attempted and finished after the restart',
    );
    stopWatching();

    // One attempt per debt: nothing lost, nothing doubled.
    expect(new Set(finished.orig.map((o) => o.debtId))).toEqual(new Set(debtIds));
    expect(finished.orig).toHaveLength(LEADS);
    // The switch placed each recorded call at most once, and placed nothing unrecorded.
    const recorded = new Set(finished.orig.map((o) => o.callUuid));
    for (const [uuid, times] of created) {
      expect(times).toBe(1);
      expect(recorded.has(uuid)).toBe(true);
    }
    // A call recorded as sent that never reached the switch (the kill fell between the two) is
    // closed by the reaper, never sent again. A tick records its batch before it sends it, so at
    // most the rest of one batch (batch_size 5) can be caught between the two.
    const unsent = finished.orig.filter((o) => !created.has(o.callUuid!));
    expect(unsent.length).toBeLessThan(5);
    const dispositionOf = (id: string) =>
      finished.rows.filter((r) => r.correctsId === id && r.endedAt !== null).sort((a, b) => a.insertedAt.getTime() - b.insertedAt.getTime())[0]!.disposition;
    for (const o of unsent) expect(dispositionOf(o.id)).toBe('reaped');
    expect(created.size).toBe(LEADS - unsent.length);

    // Agents held by calls whose hangup the dead worker never heard are free again.
    await waitFor(async () => {
      const seats = await withTenant(app.deps.db, tenant.tenantId, (tx) => tx.agent.findMany({ where: { id: { in: agents } } }));
      return seats.every((s) => s.presence === 'available') ? true : undefined;
    }, 30_000, 'agents released');

    const stopped = await app.request('POST', `/v1/campaigns/${campaignId}/stop`, { token: tenant.apiKey });
    expect(stopped.body.campaign.state).toBe('completed');
  });
});
