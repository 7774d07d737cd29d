import { randomUUID } from 'node:crypto';
import { DateTime } from 'luxon';
import { createLogger } from '../../src/lib/logger';
import { withTenant } from '../../src/lib/tenancy';
import { evaluate } from '../../src/modules/compliance/compliance.service';
import { createEslManager } from '../../src/switch/esl';
import { startSwitchSimulator } from '../../src/switch/simulator';
import { realClock, type Clock } from '../../src/switch/simulator/clock';
import { numberEnding, runWorker, seatAgents, startSwitchRig, waitFor, type RunningWorker, type SwitchRig } from '../helpers/dial-loop';
import { provisionTenant, startTestApp, type ProvisionedTenant, type TestApp } from '../helpers/harness';

/**
 * Regulation F's 7-day hiatus after a telephone conversation (12 CFR 1006.14(b)(2)(i)(B)) from
 * conversations the product records itself (CONTRACT section 9): calls placed through the HTTP API
 * against the switch simulator over TCP, and the next dial answered by the engine. Nothing here
 * writes a conversation, last_conversation_at or any other fact: debts and their consent come from the
 * import route.
 */

jest.setTimeout(120_000);

interface Env {
  rig: SwitchRig;
  app: TestApp;
  worker: RunningWorker;
}

let env: Env;

async function startEnv(rig: SwitchRig): Promise<Env> {
  const taskQueue = `conversations-${randomUUID()}`;
  const app = await startTestApp({ TEMPORAL_TASK_QUEUE: taskQueue }, { esl: rig.esl });
  const worker = await runWorker(app, taskQueue);
  return { rig, app, worker };
}

async function stopEnv(e: Env | undefined): Promise<void> {
  await e?.worker.stop();
  await e?.app.close();
  await e?.rig.close();
}

beforeAll(async () => {
  // The consumer stays on the line longer than the 2-second window an agent has to pick up.
  env = await startEnv(await startSwitchRig({ talkMs: 3000 }));
});
afterAll(async () => {
  await stopEnv(env);
});

/**
 * Number prefixes in zones that keep daylight saving time, each with a zone where it is daytime
 * at some hour of the UTC day: the dial goes out with the real clock (quiet hours), and the DST
 * test needs the consumer's own zone to change its offset.
 */
const DST_PREFIXES: Array<{ prefix: string; zone: string }> = [
  { prefix: '+1303555', zone: 'America/Denver' },
  { prefix: '+1404555', zone: 'America/New_York' },
  { prefix: '+44207946', zone: 'Europe/London' },
  { prefix: '+493055', zone: 'Europe/Berlin' },
  { prefix: '+6129123', zone: 'Australia/Sydney' },
];

function daytimeDstPrefix(at = new Date()): { prefix: string; zone: string } {
  const found = DST_PREFIXES.find(({ zone }) => {
    const hour = DateTime.fromJSDate(at, { zone }).hour;
    return hour >= 9 && hour < 19;
  });
  if (!found) throw new Error('no daytime zone among the prefixes');
  return found;
}

let serial = 0;
const HUMAN = 10;
const MACHINE = 61;
const phoneEnding = (lastTwo: number, prefix = daytimeDstPrefix().prefix) => numberEnding(prefix, (serial += 1), lastTwo);

async function runningCampaign(e: Env, tenant: ProvisionedTenant, extra: Record<string, unknown> = {}): Promise<string> {
  const created = await e.app.request('POST', '/v1/campaigns', { token: tenant.apiKey, body: { name: `conv-${randomUUID()}`, campaign_type: 'manual', ...extra } });
  expect(created.status).toBe(201);
  const id: string = created.body.campaign.id;
  expect((await e.app.request('POST', `/v1/campaigns/${id}/start`, { token: tenant.apiKey })).status).toBe(200);
  return id;
}

/** Debts of the campaign through the import route, one primary contact each (the import grants its consent). */
async function importLeads(e: Env, tenant: ProvisionedTenant, campaignId: string, phones: string[]): Promise<string[]> {
  const refs = phones.map(() => `conv-${randomUUID()}`);
  const res = await e.app.request('POST', '/v1/debts/import', {
    token: tenant.apiKey,
    body: {
      debts: phones.map((phone, i) => ({
        external_ref: refs[i],
        consumer_ref: `c-${refs[i]}`,
        campaign_id: campaignId,
        amount_cents: 10_000,
        contacts: [{ phone_e164: phone, is_primary: true }],
      })),
    },
  });
  expect(res.body).toEqual({ imported: phones.length, failed: [] });
  const ids: string[] = [];
  for (const ref of refs) ids.push((await e.app.request('GET', `/v1/debts?external_ref=${ref}`, { token: tenant.apiKey })).body.debts[0].id);
  return ids;
}

const dial = (e: Env, tenant: ProvisionedTenant, campaignId: string, debtId: string) =>
  e.app.request('POST', `/v1/campaigns/${campaignId}/dial`, { token: tenant.apiKey, body: { debt_id: debtId } });

async function finalRow(e: Env, tenant: ProvisionedTenant, callAttemptId: string) {
  return waitFor(
    async () => {
      const res = await e.app.request('GET', `/v1/call_attempts?limit=1000`, { token: tenant.apiKey });
      return (res.body.call_attempts as any[]).find((r) => r.corrects_id === callAttemptId && r.ended_at !== null);
    },
    30_000,
    'the final row of the call',
  );
}

/** A dial placed and followed to its final row. */
async function placedCall(e: Env, tenant: ProvisionedTenant, campaignId: string, debtId: string) {
  const res = await dial(e, tenant, campaignId, debtId);
  expect(res.status).toBe(200);
  expect(res.body.status).toBe('dialing');
  const final = await finalRow(e, tenant, res.body.call_id);
  return { original: res.body.call_attempt, final };
}

async function agentFree(e: Env, tenant: ProvisionedTenant, agentId: string) {
  await waitFor(
    async () => ((await withTenant(e.app.deps.db, tenant.tenantId, (tx) => tx.agent.findUniqueOrThrow({ where: { id: agentId } }))).presence === 'available' ? true : undefined),
    10_000,
    'the agent free again',
  );
}

const ledgerOf = (e: Env, tenant: ProvisionedTenant, debtId: string) =>
  withTenant(e.app.deps.db, tenant.tenantId, async (tx) => ({
    conversations: await tx.conversation.findMany({ where: { debtId }, orderBy: { occurredAt: 'asc' } }),
    debtLastConversationAt: (await tx.debt.findUniqueOrThrow({ where: { id: debtId } })).lastConversationAt,
  }));

async function expectBlockedPostContact(e: Env, tenant: ProvisionedTenant, campaignId: string, debtId: string) {
  const next = await dial(e, tenant, campaignId, debtId);
  expect(next.status).toBe(200);
  expect(next.body).toEqual({ status: 'blocked', reason: 'regf_post_contact', decision_id: expect.any(String) });
  const decision = await withTenant(e.app.deps.db, tenant.tenantId, (tx) => tx.auditLog.findUniqueOrThrow({ where: { id: next.body.decision_id } }));
  expect(decision).toMatchObject({ action: 'compliance.decision', subjectId: debtId });
  expect(decision.payload).toMatchObject({ allowed: false, gate: 'regf_post_contact', initiation: 'human' });
}

describe('a telephone conversation recorded from the call itself', () => {
  it('dial, human answer, agent bridge, hangup: the conversation is on the ledger and the next dial is blocked regf_post_contact', async () => {
    const tenant = await provisionTenant(env.app);
    const [agentId] = await seatAgents(env.app, env.rig, tenant, 1);
    const campaignId = await runningCampaign(env, tenant);
    const phone = phoneEnding(HUMAN);
    const [debtId] = await importLeads(env, tenant, campaignId, [phone]);

    const { original, final } = await placedCall(env, tenant, campaignId, debtId!);
    expect(final).toMatchObject({ disposition: 'answered_human', agent_id: agentId });

    const { conversations, debtLastConversationAt } = await ledgerOf(env, tenant, debtId!);
    expect(conversations).toHaveLength(1);
    const [bridge] = conversations;
    expect(bridge).toMatchObject({ source: 'agent_bridge', callAttemptId: original.id, phoneE164: phone });
    expect(bridge!.evidence).toMatchObject({ agent_id: agentId, call_uuid: original.call_uuid, resumed: false });
    // At the bridge: after the answer, before the hangup.
    expect(bridge!.occurredAt.getTime()).toBeGreaterThanOrEqual(Date.parse(final.answered_at));
    expect(bridge!.occurredAt.getTime()).toBeLessThanOrEqual(Date.parse(final.ended_at));
    expect(debtLastConversationAt).toEqual(bridge!.occurredAt);

    await agentFree(env, tenant, agentId!);
    await expectBlockedPostContact(env, tenant, campaignId, debtId!);

    // The defense packet lists it.
    const packet = await env.app.request('GET', `/v1/debts/${debtId}/defense-packet`, { token: tenant.apiKey });
    expect(packet.body.conversations).toEqual([expect.objectContaining({ id: bridge!.id, source: 'agent_bridge', call_attempt_id: original.id })]);
  });

  it('not after abandoned calls (no agent reached the consumer); a right-party disposition of an answered attempt then blocks the next dial', async () => {
    const tenant = await provisionTenant(env.app);
    const [agentId] = await seatAgents(env.app, env.rig, tenant, 1);
    const campaignId = await runningCampaign(env, tenant);
    const [debtId] = await importLeads(env, tenant, campaignId, [phoneEnding(HUMAN)]);
    const extension = await withTenant(env.app.deps.db, tenant.tenantId, async (tx) => (await tx.agent.findUniqueOrThrow({ where: { id: agentId! } })).sipExtension!);

    // The seat's softphone answers too late: the consumer waits past the two seconds, the agent leg is
    // hung up and the seller message is spoken.
    env.rig.sim.setAnswerDelay(extension, 2600);
    const abandoned = await placedCall(env, tenant, campaignId, debtId!);
    expect(abandoned.final).toMatchObject({ disposition: 'abandoned', agent_id: null });
    expect(abandoned.final.answered_at).not.toBeNull();
    expect(await ledgerOf(env, tenant, debtId!)).toEqual({ conversations: [], debtLastConversationAt: null });

    // The next dial goes out; it is abandoned too, and still nothing is a conversation.
    await agentFree(env, tenant, agentId!);
    const next = await placedCall(env, tenant, campaignId, debtId!);
    expect(next.final.disposition).toBe('abandoned');
    expect(await ledgerOf(env, tenant, debtId!)).toEqual({ conversations: [], debtLastConversationAt: null });
    env.rig.sim.setAnswerDelay(extension, 0);

    // The agent's right-party disposition of the first (answered) attempt is a conversation,
    // dated at that call's answer, and it alone blocks the next dial.
    const disposed = await env.app.request('POST', `/v1/call_attempts/${abandoned.original.id}/disposition`, {
      token: tenant.apiKey,
      body: { disposition: 'callback_requested', agent_id: agentId },
    });
    expect(disposed.status).toBe(201);
    const after = await ledgerOf(env, tenant, debtId!);
    expect(after.conversations).toEqual([
      expect.objectContaining({ source: 'disposition', callAttemptId: abandoned.original.id, occurredAt: new Date(abandoned.final.answered_at) }),
    ]);
    await expectBlockedPostContact(env, tenant, campaignId, debtId!);
  });

  it('not after a machine answer, even with the agent bridged before the AMD verdict was read', async () => {
    const tenant = await provisionTenant(env.app);
    const [agentId] = await seatAgents(env.app, env.rig, tenant, 1);
    // AMD on and no deferred bridge: the agent is put on the line at the answer, then the verdict ends the call.
    const campaignId = await runningCampaign(env, tenant, { amd_enabled: true, deferred_bridge: false });
    const [debtId] = await importLeads(env, tenant, campaignId, [phoneEnding(MACHINE)]);

    const machine = await placedCall(env, tenant, campaignId, debtId!);
    expect(machine.final).toMatchObject({ disposition: 'machine', amd_verdict: 'MACHINE' });
    expect(machine.final.answered_at).not.toBeNull();
    expect(await ledgerOf(env, tenant, debtId!)).toEqual({ conversations: [], debtLastConversationAt: null });

    await agentFree(env, tenant, agentId!);
    const next = await dial(env, tenant, campaignId, debtId!);
    expect(next.status).toBe(200);
    expect(next.body.status).toBe('dialing');
    await finalRow(env, tenant, next.body.call_id);
  });
});

describe('the hiatus counted in the consumer’s zone across a daylight-saving change', () => {
  /**
   * The API decides with the real clock and cannot be given another one, so the conversation is
   * produced by a real call through the API on a switch whose clock stands at 23:30 local time on
   * the eve of the consumer zone's next offset change (the call's answer carries the switch's
   * time), dispositioned by the agent (dated at that answer); the engine then judges the next call
   * at chosen instants of that week.
   */
  let shifted: Env | undefined;
  afterAll(async () => {
    await stopEnv(shifted);
  });

  /** The first local day, at least 8 days out, on which the zone's offset differs from the day before. */
  function nextOffsetChange(zone: string, from: Date): DateTime {
    let day = DateTime.fromJSDate(from, { zone }).startOf('day').plus({ days: 8 });
    for (let i = 0; i < 400; i += 1) {
      const next = day.plus({ days: 1 });
      if (next.set({ hour: 12 }).offset !== day.set({ hour: 12 }).offset) return next;
      day = next;
    }
    throw new Error(`${zone} keeps one offset all year`);
  }

  it('refuses through day 7 and allows from 00:00 of day 8, local time, whichever way the clock moved', async () => {
    const { prefix, zone } = daytimeDstPrefix();
    const change = nextOffsetChange(zone, new Date());
    const eve = change.minus({ days: 1 }).set({ hour: 23, minute: 30, second: 0, millisecond: 0 });
    const offsetMs = eve.toMillis() - Date.now();
    const clock: Clock = { ...realClock, now: () => Date.now() + offsetMs };
    const password = randomUUID();
    const sim = await startSwitchSimulator({ host: '127.0.0.1', port: 0, password, ringMs: 100, talkMs: 400, promptMs: 100, amdMs: 0, clock });
    const esl = createEslManager({ host: '127.0.0.1', port: sim.port, password, logger: createLogger('silent'), backoff: { initialMs: 10, maxMs: 200 } });
    await esl.waitUntilUp();
    shifted = await startEnv({
      sim,
      esl,
      async close() {
        await esl.close();
        await sim.stop();
      },
    });

    const tenant = await provisionTenant(shifted.app);
    const [agentId] = await seatAgents(shifted.app, shifted.rig, tenant, 1);
    const campaignId = await runningCampaign(shifted, tenant);
    const phone = phoneEnding(HUMAN, prefix);
    const [debtId] = await importLeads(shifted, tenant, campaignId, [phone]);
    const call = await placedCall(shifted, tenant, campaignId, debtId!);
    const answeredAt = DateTime.fromISO(call.final.answered_at, { zone });
    // Day 1 is the eve of the change, local time.
    expect(answeredAt.toISODate()).toBe(eve.toISODate());

    await agentFree(shifted, tenant, agentId!);
    const disposed = await shifted.app.request('POST', `/v1/call_attempts/${call.original.id}/disposition`, {
      token: tenant.apiKey,
      body: { disposition: 'conversation' },
    });
    expect(disposed.status).toBe(201);
    const { debtLastConversationAt } = await ledgerOf(shifted, tenant, debtId!);
    expect(debtLastConversationAt).toEqual(new Date(call.final.answered_at));

    const decideAt = async (local: DateTime) => {
      const [decision] = await evaluate(
        shifted!.app.deps,
        tenant.tenantId,
        [{ debtId: debtId!, phone, channel: 'voice', campaignId, initiation: 'human', artificialVoice: false }],
        { actor: { type: 'system', id: null }, now: local.toJSDate() },
      );
      expect(decision!.zones).toEqual([zone]);
      return decision!;
    };
    const postContact = async (local: DateTime) => (await decideAt(local)).checks.find((c) => c.gate === 'regf_post_contact')!.outcome;
    const day1 = answeredAt.startOf('day');
    // At noon of day 7, after the change, the call is refused by the hiatus alone, with its evidence.
    const day7 = await decideAt(day1.plus({ days: 6 }).set({ hour: 12 }));
    expect({ allowed: day7.allowed, gate: day7.gate, decided: day7.decisionId !== null }).toEqual({ allowed: false, gate: 'regf_post_contact', decided: true });
    // 23:30 and 00:30 local: 7 x 24 hours from the answer fall an hour off midnight on either side of the change.
    expect(await postContact(day1.plus({ days: 6 }).set({ hour: 23, minute: 30 }))).toBe('block');
    expect(await postContact(day1.plus({ days: 7 }).set({ hour: 0, minute: 30 }))).toBe('pass');
    expect(await postContact(day1.plus({ days: 7 }).set({ hour: 12 }))).toBe('pass');
  });
});

describe('AMD on a switch of its own timing', () => {
  const owned: Env[] = [];
  afterAll(async () => {
    for (const e of owned) await stopEnv(e);
  });

  /** One seated agent, one running manual campaign with AMD, one human lead, and its dial followed to the final row. */
  async function oneCall(rig: Parameters<typeof startSwitchRig>[0], deferredBridge: boolean) {
    const e = await startEnv(await startSwitchRig(rig));
    owned.push(e);
    const tenant = await provisionTenant(e.app);
    const [agentId] = await seatAgents(e.app, e.rig, tenant, 1);
    const campaignId = await runningCampaign(e, tenant, { amd_enabled: true, deferred_bridge: deferredBridge });
    const [debtId] = await importLeads(e, tenant, campaignId, [phoneEnding(HUMAN)]);
    const { original, final } = await placedCall(e, tenant, campaignId, debtId!);
    return { e, tenant, agentId: agentId!, campaignId, debtId: debtId!, original, final };
  }

  it('a verdict that comes after the bridge: the conversation is recorded when the call ends answered by a person, and the next dial is blocked', async () => {
    // The verdict takes three seconds: the agent is on the line before anyone knows it is a person
    // (the bridge comes well within them even on a loaded machine; the consumer talks 5 s after it).
    const { e, tenant, agentId, campaignId, debtId, original, final } = await oneCall({ amdMs: 3000, talkMs: 5000 }, false);
    expect(final).toMatchObject({ disposition: 'answered_human', amd_verdict: 'HUMAN', agent_id: agentId });
    const { conversations } = await ledgerOf(e, tenant, debtId);
    expect(conversations).toEqual([expect.objectContaining({ source: 'agent_bridge', callAttemptId: original.id, occurredAt: new Date(final.ended_at) })]);
    expect(conversations[0]!.evidence).toMatchObject({ proven_by: 'hangup', agent_id: agentId });

    await agentFree(e, tenant, agentId);
    await expectBlockedPostContact(e, tenant, campaignId, debtId);
  });

  it('a consumer who hangs up waiting for the verdict after the two seconds is abandoned, though no seller message could be spoken', async () => {
    // The verdict would take four seconds and the consumer gives up after two and a half: the
    // connect, held back for the verdict, never runs, and nobody reached the consumer.
    const { e, tenant, campaignId, debtId, final } = await oneCall({ amdMs: 4000, talkMs: 2500 }, true);
    expect(final).toMatchObject({ disposition: 'abandoned', agent_id: null, amd_verdict: null });
    expect(Date.parse(final.ended_at) - Date.parse(final.answered_at)).toBeGreaterThanOrEqual(2000);
    expect(await ledgerOf(e, tenant, debtId)).toEqual({ conversations: [], debtLastConversationAt: null });

    // The 30-day abandonment record counts it.
    const figure = await e.app.request('GET', `/v1/stats/abandonment?campaign_id=${campaignId}`, { token: tenant.apiKey });
    expect(figure.status).toBe(200);
    expect(figure.body.by_campaign).toEqual([{ campaign_id: campaignId, human_answered: 1, connected: 0, abandoned: 1, abandonment_rate: '1.0000' }]);
  });
});
