import { randomUUID } from 'node:crypto';
import { createLogger } from '../../src/lib/logger';
import { withTenant } from '../../src/lib/tenancy';
import { wakeCampaignRuns } from '../../src/modules/dialer/campaign-wake';
import { createEslManager, type EslManager } from '../../src/switch/esl';
import { startSwitchSimulator, type SwitchSimulator } from '../../src/switch/simulator';
import { createWorker, type WorkerHandle } from '../../workers/worker';
import { SWITCH_DIRECTORY_PATH } from '../../src/modules/switch-directory/switch-directory.routes';
import { SWITCH_DIRECTORY_TOKEN, type ProvisionedTenant, type TestApp } from './harness';

/**
 * Number prefixes whose local time is checked against the hour now: the dial loop decides with
 * the real clock, so the tests call a zone where it is daytime (09:00-19:00) to stay clear of the
 * 08:00-21:00 quiet-hours gate whenever the suite runs.
 */
const DAYTIME_PREFIXES: Array<{ prefix: string; zone: string }> = [
  { prefix: '+1303555', zone: 'America/Denver' },
  { prefix: '+44207946', zone: 'Europe/London' },
  { prefix: '+1808555', zone: 'Pacific/Honolulu' },
  { prefix: '+1671555', zone: 'Pacific/Guam' },
  { prefix: '+1404555', zone: 'America/New_York' },
];

function localHour(zone: string, at: Date): number {
  return Number(new Intl.DateTimeFormat('en-US', { timeZone: zone, hour: 'numeric', hourCycle: 'h23' }).format(at));
}

export function daytimePrefix(at = new Date()): string {
  const found = DAYTIME_PREFIXES.find((p) => {
    const h = localHour(p.zone, at);
    return h >= 9 && h < 19;
  });
  if (!found) throw new Error('no daytime zone among the test prefixes');
  return found.prefix;
}

/** A destination the simulator treats by its last two digits (CONTRACT.md section 2). */
export function numberEnding(prefix: string, serial: number, lastTwo: number): string {
  return `${prefix}${String(serial % 100).padStart(2, '0')}${String(lastTwo).padStart(2, '0')}`;
}

export interface SwitchRig {
  sim: SwitchSimulator;
  esl: EslManager;
  close(): Promise<void>;
}

export async function startSwitchRig(opts: { ringMs?: number; talkMs?: number; promptMs?: number; amdMs?: number; speechMsPerChar?: number } = {}): Promise<SwitchRig> {
  const password = randomUUID();
  const sim = await startSwitchSimulator({
    host: '127.0.0.1',
    port: 0,
    password,
    ringMs: opts.ringMs ?? 100,
    talkMs: opts.talkMs ?? 400,
    promptMs: opts.promptMs ?? 100,
    // Speech at a tenth of flite's pace: a sentence takes a few hundred milliseconds.
    speechMsPerChar: opts.speechMsPerChar ?? 6,
    amdMs: opts.amdMs ?? 0,
  });
  const esl = createEslManager({ host: '127.0.0.1', port: sim.port, password, logger: createLogger('silent'), backoff: { initialMs: 10, maxMs: 200 } });
  await esl.waitUntilUp();
  return {
    sim,
    esl,
    async close() {
      await esl.close();
      await sim.stop();
    },
  };
}

export interface RunningWorker {
  handle: WorkerHandle;
  stop(): Promise<void>;
}

export async function runWorker(app: TestApp, taskQueue: string): Promise<RunningWorker> {
  const handle = await createWorker(app.deps, {
    address: app.config.TEMPORAL_ADDRESS!,
    namespace: app.config.TEMPORAL_NAMESPACE,
    taskQueue,
    workflowBundlePath: process.env.TEST_WORKFLOW_BUNDLE,
  });
  const running = handle.worker.run();
  return {
    handle,
    async stop() {
      handle.shutdown();
      await running;
      await handle.stopRelay();
      await handle.connection.close();
    },
  };
}

/** Extensions are unique per tenant: a counter, so seats of one tenant never collide. */
let seatSerial = Math.floor(Math.random() * 1000);

/** Where the rig's switch fetches its directory: the test app's own endpoint, with the switch's credential. */
export function pointSwitchAtDirectory(app: Pick<TestApp, 'baseUrl'>, rig: Pick<SwitchRig, 'sim'>): void {
  rig.sim.useDirectory(`${app.baseUrl}${SWITCH_DIRECTORY_PATH}`, `freeswitch:${SWITCH_DIRECTORY_TOKEN}`);
}

export interface CheckedInSeat {
  agentId: string;
  extension: string;
  softphone: { domain: string | null; sip_username: string; sip_password: string };
}

/** A browser seat checked in through the API (its ephemeral SIP credential minted), not registered yet. */
export async function checkInSeat(app: TestApp, tenant: ProvisionedTenant, label = 'Seat'): Promise<CheckedInSeat> {
  seatSerial = (seatSerial + 1) % 2000;
  const ext = `${7000 + seatSerial}${Math.floor(Math.random() * 10)}`;
  const agent = await withTenant(app.deps.db, tenant.tenantId, (tx) =>
    tx.agent.create({ data: { tenantId: tenant.tenantId, name: label, email: `seat-${randomUUID()}@example.com`, sipExtension: ext } }),
  );
  const res = await app.request('POST', '/v1/agents/checkin', { token: tenant.apiKey, body: { sip_extension: ext, device_mode: 'browser' } });
  if (res.status !== 200) throw new Error(`check-in of ${ext}: ${res.status} ${res.text}`);
  return { agentId: agent.id, extension: ext, softphone: res.body.softphone };
}

/** The seat's softphone REGISTERs on the simulator through the directory, and the API shows it registered. */
export async function registerSeat(app: TestApp, rig: SwitchRig, tenant: ProvisionedTenant, seat: CheckedInSeat, expiresSec?: number): Promise<void> {
  pointSwitchAtDirectory(app, rig);
  await rig.sim.register({
    extension: seat.extension,
    domain: seat.softphone.domain ?? undefined,
    username: seat.softphone.sip_username,
    password: seat.softphone.sip_password,
    expiresSec,
  });
  await agentRegistered(app, tenant, seat.agentId, true);
}

/** Waits until GET /v1/agents/{id} says `registered` is `want` (the worker applies the switch's registration events). */
export async function agentRegistered(app: TestApp, tenant: ProvisionedTenant, agentId: string, want: boolean): Promise<void> {
  await waitFor(
    async () => {
      const res = await app.request('GET', `/v1/agents/${agentId}`, { token: tenant.apiKey });
      return res.body?.agent?.registered === want ? true : undefined;
    },
    15_000,
    `agent ${agentId} registered=${want}`,
  );
}

/**
 * Agents on seats, through the real path: checked in as browser seats through the API, their
 * softphones registered on the simulator through the product's switch directory (digest), and
 * `registered` seen on the agent. A running worker (its registration relay) is required.
 */
export async function seatAgents(app: TestApp, rig: SwitchRig, tenant: ProvisionedTenant, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i += 1) {
    const seat = await checkInSeat(app, tenant, `Seat ${i}`);
    await registerSeat(app, rig, tenant, seat);
    ids.push(seat.agentId);
  }
  return ids;
}

/**
 * An existing agent's softphone on the switch without offering the seat to the dial loop (a
 * supervisor's or a takeover extension): checked in as a browser seat, registered through the
 * directory, then paused.
 */
export async function standbySeat(app: TestApp, rig: SwitchRig, tenant: ProvisionedTenant, agent: { id: string; extension: string }): Promise<void> {
  const res = await app.request('POST', '/v1/agents/checkin', { token: tenant.apiKey, body: { sip_extension: agent.extension, device_mode: 'browser' } });
  if (res.status !== 200) throw new Error(`check-in of ${agent.extension}: ${res.status} ${res.text}`);
  await registerSeat(app, rig, tenant, { agentId: agent.id, extension: agent.extension, softphone: res.body.softphone });
  const paused = await app.request('POST', `/v1/agents/${agent.id}/pause`, { token: tenant.apiKey });
  if (paused.status !== 200) throw new Error(`pause of ${agent.extension}: ${paused.status} ${paused.text}`);
}

/**
 * Debts of a campaign with a primary contact and voice consent each; then the campaign's run is
 * woken, as an import wakes it (an idle run sleeps until something can give it work).
 */
export async function seedLeads(app: TestApp, tenant: ProvisionedTenant, campaignId: string, phones: string[]): Promise<string[]> {
  const seeded = await withTenant(app.deps.db, tenant.tenantId, async (tx) => {
    const ids: string[] = [];
    for (const [i, phone] of phones.entries()) {
      const debt = await tx.debt.create({
        data: {
          tenantId: tenant.tenantId,
          campaignId,
          externalRef: `dl-${i}-${randomUUID()}`,
          consumerRef: `consumer-${i}`,
          amountCents: 10_000n,
          createdAt: new Date(Date.now() - (1000 - i) * 1000),
        },
      });
      await tx.debtContact.create({ data: { tenantId: tenant.tenantId, debtId: debt.id, phoneE164: phone, isPrimary: true } });
      await tx.consent.create({ data: { tenantId: tenant.tenantId, debtId: debt.id, phoneE164: phone, channel: 'voice', source: 'import' } });
      ids.push(debt.id);
    }
    return ids;
  });
  await wakeCampaignRuns(app.deps, tenant.tenantId, [campaignId]);
  return seeded;
}

/** Polls `probe` until it returns a value (not undefined), failing after timeoutMs. */
export async function waitFor<T>(probe: () => Promise<T | undefined>, timeoutMs = 30_000, what = 'condition'): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
