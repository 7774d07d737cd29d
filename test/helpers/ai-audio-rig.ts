import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import WebSocket from 'ws';
import { withTenantSql } from '../../src/lib/tenancy';
import { AUDIO_FORK_SUBPROTOCOL, audioForkUrl } from '../../src/modules/ai-calls/audio-fork';
import { freePort } from '../../src/platform/temporal-dev';
import { daytimePrefix, numberEnding, runWorker, startSwitchRig, waitFor, type RunningWorker, type SwitchRig } from './dial-loop';
import { startTestApp, type TestApp } from './harness';
import { importAiLead, provisionAiTenant, type AiTenant } from './ai-tenant';
import { recordWorkflowHistories, type Pick } from './workflow-histories';

/**
 * Voice AI on real audio, end to end (the ai-audio*.e2e suites): an ai_voice campaign dials
 * simulated consumers (numbers ending 40-49, docs/simulated-consumer.md) who speak synthesized
 * audio into the switch's mod_audio_fork; the worker's audio gateway recognizes it (the offline
 * PocketSphinx engine) and signals the AI workflow; the rule engine answers and the switch speaks.
 * The suites are split so the two real-time halves run side by side.
 */
export interface AiAudioRig {
  rig: SwitchRig;
  app: TestApp;
  /** A loopback HTTP receiver the egress allowlist lets webhooks reach. */
  receiverUrl: string;
  aiTenant: (extra?: Record<string, unknown>) => Promise<AiTenant>;
  /** An ai_voice campaign with one lead on a number ending `lastTwo`, started; answers its placed call. */
  dial: (t: AiTenant, lastTwo: number, consult: Record<string, unknown>, fields?: Record<string, unknown>) => Promise<AiCall>;
  waitConversation: (t: AiTenant, uuid: string, pred: (c: ConversationRow) => boolean, what: string, ms?: number) => Promise<ConversationRow>;
  /** The call's timeline once its hangup is on it. */
  finishedTimeline: (t: AiTenant, uuid: string) => Promise<TimelineEntry[]>;
  timeline: (t: AiTenant, uuid: string) => Promise<TimelineEntry[]>;
  finalRow: (t: AiTenant, call: AiCall) => Promise<any>;
  stop: (t: AiTenant, campaignId: string) => Promise<void>;
  /** A workflow history as the Web UI shows it, payloads decoded. */
  historyText: (workflowId: string) => Promise<string>;
}

export interface AiCall {
  campaignId: string;
  debtId: string;
  uuid: string;
  originalId: string;
}

export interface ConversationRow {
  id: string;
  status: string;
  outcome: string | null;
  transcript: Array<{ speaker: string; text: string; confidence?: number; audio_start_ms?: number; audio_end_ms?: number }>;
  events: Array<{ type: string; [k: string]: unknown }>;
}

export type TimelineEntry = { at: string; event: string; [k: string]: any };

/** The closing line every AI-ended call says. */
export const AI_GOODBYE = 'I am sorry, I have to end this call now. Thank you for your time. Goodbye.';

/**
 * Starts the switch, the app (AI audio gateway on a free port) and a worker for the calling suite
 * (its beforeAll/afterAll), and records the workflow histories `picks` names when asked to
 * (RECORD_WORKFLOW_HISTORIES, test/helpers/workflow-histories.ts). The rig's fields are set once
 * beforeAll has run.
 */
export function useAiAudioRig(source: string, picks: Record<string, Pick>): AiAudioRig {
  const taskQueue = `${source}-${randomUUID()}`;
  const prefix = daytimePrefix();
  let serial = Math.floor(Math.random() * 50);
  let worker: RunningWorker | undefined;
  let receiver: http.Server | undefined;

  const originals = async (t: AiTenant, campaignId: string): Promise<any[]> => {
    const res = await ctx.app.request('GET', `/v1/call_attempts?campaign_id=${campaignId}&limit=1000`, { token: t.tenant.apiKey });
    expect(res.status).toBe(200);
    return res.body.call_attempts;
  };

  const ctx: AiAudioRig = {
    rig: undefined as unknown as SwitchRig,
    app: undefined as unknown as TestApp,
    receiverUrl: '',
    aiTenant: (extra = {}) => provisionAiTenant(ctx.app, extra),
    async dial(t, lastTwo, consult, fields = {}) {
      const { app } = ctx;
      const created = await app.request('POST', '/v1/campaigns', {
        token: t.tenant.apiKey,
        body: { name: `${source}-${randomUUID()}`, campaign_type: 'ai_voice', ai_agent_id: t.agentId, consult_config: consult },
      });
      expect(created.status).toBe(201);
      const campaignId: string = created.body.campaign.id;
      const { debtId } = await importAiLead(app, t, { campaignId, phone: numberEnding(prefix, (serial += 1), lastTwo), fields });
      expect((await app.request('POST', `/v1/campaigns/${campaignId}/start`, { token: t.tenant.apiKey, body: { tick_ms: 200, batch_size: 5 } })).status).toBe(200);
      const original = await waitFor(async () => (await originals(t, campaignId)).find((r) => r.corrects_id === null && r.call_uuid), 20_000, 'a placed call');
      return { campaignId, debtId, uuid: original.call_uuid, originalId: original.id };
    },
    waitConversation(t, uuid, pred, what, ms = 60_000) {
      return waitFor(async () => {
        const [c] = await withTenantSql(ctx.app.deps.db, t.tenant.tenantId, (sql) =>
          sql.query<ConversationRow>('SELECT id, status, outcome, transcript, events FROM ai_conversations WHERE call_uuid = $1', [uuid]),
        );
        return c && pred(c) ? c : undefined;
      }, ms, what);
    },
    async timeline(t, uuid) {
      const res = await ctx.app.request('GET', `/v1/calls/${uuid}`, { token: t.tenant.apiKey });
      return (res.body.timeline ?? []) as TimelineEntry[];
    },
    finishedTimeline(t, uuid) {
      return waitFor(async () => {
        const entries = await ctx.timeline(t, uuid);
        return entries.some((e) => e.event === 'hangup') ? entries : undefined;
      }, 60_000, 'the finished timeline');
    },
    finalRow(t, call) {
      return waitFor(async () => (await originals(t, call.campaignId)).find((r) => r.corrects_id === call.originalId && r.ended_at !== null), 60_000, 'the final row');
    },
    async stop(t, campaignId) {
      expect((await ctx.app.request('POST', `/v1/campaigns/${campaignId}/stop`, { token: t.tenant.apiKey })).status).toBe(200);
    },
    async historyText(id) {
      const history = await ctx.app.deps.temporal!.workflow.getHandle(id).fetchHistory();
      return JSON.stringify(history, (key, value: unknown) => (key === 'data' && typeof value === 'string' ? Buffer.from(value, 'base64').toString('utf8') : value));
    },
  };

  beforeAll(async () => {
    receiver = http.createServer((_req, res) => res.writeHead(200).end('ok'));
    await new Promise<void>((resolve) => receiver!.listen(0, '127.0.0.1', resolve));
    const receiverPort = (receiver.address() as AddressInfo).port;
    ctx.receiverUrl = `http://127.0.0.1:${receiverPort}`;
    // Speech at a third of flite's pace: an AI turn takes a second or two, so a consumer can talk over it.
    ctx.rig = await startSwitchRig({ ringMs: 100, talkMs: 60_000, promptMs: 100, speechMsPerChar: 20 });
    // The gateway's port is free when chosen but taken later, in the worker; another process (the
    // other half of these suites starts its rig at the same moment) may bind it first, and the
    // worker's gateway then does not start, so every fork fails. Started again on another port.
    for (let attempt = 1; ; attempt += 1) {
      const port = await freePort();
      const secret = randomUUID();
      const base = `ws://127.0.0.1:${port}/ai-audio`;
      ctx.app = await startTestApp(
        { TEMPORAL_TASK_QUEUE: taskQueue, LOG_LEVEL: 'trace', EGRESS_ALLOWLIST: ctx.receiverUrl, AI_AUDIO_WS_PORT: String(port), AI_AUDIO_WS_URL: base, AI_AUDIO_SECRET: secret },
        { esl: ctx.rig.esl },
      );
      worker = await runWorker(ctx.app, taskQueue);
      const answer = await waitFor(async () => {
        const a = await gatewayAnswer(base, secret);
        return a === 'refused' ? undefined : a;
      }, 10_000, `the AI audio gateway on port ${port}`).catch(() => 'refused' as const);
      if (answer === 'ours') break;
      await worker.stop();
      await ctx.app.close();
      if (attempt === 3) throw new Error(`the AI audio gateway did not start on its own port in ${attempt} attempts (last ${port}: ${answer})`);
    }
  });
  afterAll(async () => {
    await worker?.stop();
    await ctx.app?.close();
    await ctx.rig?.close();
    receiver?.closeAllConnections();
    await new Promise((resolve) => (receiver ? receiver.close(resolve) : resolve(undefined)));
  });
  afterAll(() => recordWorkflowHistories(source, [taskQueue], picks));
  return ctx;
}

/**
 * Whether the gateway at `base` is this rig's: it upgrades a fork signed with this rig's secret
 * (for a call that does not exist, closed at once: nothing is recognized or signalled). Another
 * gateway refuses the token; nothing listening refuses the connection.
 */
function gatewayAnswer(base: string, secret: string): Promise<'ours' | 'foreign' | 'refused'> {
  const ref = { tenantId: randomUUID(), callAttemptId: randomUUID(), callUuid: randomUUID() };
  return new Promise((resolve) => {
    const ws = new WebSocket(audioForkUrl(base, secret, ref), AUDIO_FORK_SUBPROTOCOL, { handshakeTimeout: 2000 });
    ws.once('open', () => {
      ws.close();
      resolve('ours');
    });
    ws.once('unexpected-response', (_req, res) => {
      res.resume();
      ws.terminate();
      resolve('foreign');
    });
    ws.once('error', () => resolve('refused'));
  });
}

/** The words the AI suites' consumers and AI say: none may reach a log line. */
export const SPOKEN_WORDS = /that is right|can do that|real person|yes please|stop calling|speaking with|automated assistant|didn.t catch that|end this call now/i;
