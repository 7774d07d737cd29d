import { randomUUID } from 'node:crypto';
import WebSocket from 'ws';
import { SIMULATED_SOFTPHONES_ENV } from '../../src/platform/child-process';
import { SWITCH_DIRECTORY_PATH } from '../../src/modules/switch-directory/switch-directory.routes';
import { daytimePrefix, numberEnding, startSwitchRig, waitFor, type SwitchRig } from '../helpers/dial-loop';
import { ADMIN_TOKEN, httpRequest, SWITCH_DIRECTORY_TOKEN, testEnv, type HttpResult } from '../helpers/harness';
import { killSpawned, spawnEntry, type Spawned } from '../helpers/processes';

jest.setTimeout(150_000);

/**
 * Horizontal scale: two API processes (`npm run api`) and a worker process (`npm run worker`) on
 * one PostgreSQL, one Temporal and one switch. A call dialed through API process A is placed and
 * followed by the worker, whose activities commit the call.* events; a websocket on API process B
 * sees them (and one on A too).
 */

interface Frame {
  event: string;
  event_id?: string;
  data?: any;
}

let rig: SwitchRig;
const taskQueue = `live-fanout-${randomUUID()}`;
let apiA: { p: Spawned; port: number };
let apiB: { p: Spawned; port: number };
let worker: Spawned;

function env(extra: Record<string, string | undefined>): Record<string, string | undefined> {
  return {
    ...testEnv({
      LOG_LEVEL: 'info',
      TEMPORAL_TASK_QUEUE: taskQueue,
      WORKFLOW_BUNDLE_PATH: process.env.TEST_WORKFLOW_BUNDLE,
      METRICS_PORT: '0',
      WORKER_METRICS_PORT: '0',
      ESL_HOST: '127.0.0.1',
      ESL_PORT: String(rig.sim.port),
      ESL_PASSWORD: rig.sim.password,
      ...extra,
    }),
  };
}

async function startApi(extra: Record<string, string> = {}): Promise<{ p: Spawned; port: number }> {
  const p = spawnEntry('src/api.ts', env(extra));
  const port = await waitFor(
    () => {
      if (p.child.exitCode !== null) throw new Error(`api exited: ${p.out().slice(-3000)}`);
      const m = /dialer API listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(p.out());
      return Promise.resolve(m ? Number(m[1]) : undefined);
    },
    60_000,
    'an API process',
  );
  return { p, port };
}

function expectOk(res: HttpResult, status = 200): HttpResult {
  expect({ status: res.status, body: res.status === status ? null : res.body }).toEqual({ status, body: null });
  return res;
}

/** A live-floor socket keeping its frames. */
async function floor(port: number, ticket: string): Promise<{ frames: Frame[]; ws: WebSocket }> {
  const ws = new WebSocket(`ws://127.0.0.1:${port}/v1/ws?ticket=${encodeURIComponent(ticket)}`);
  const frames: Frame[] = [];
  ws.on('message', (data: WebSocket.RawData) => frames.push(JSON.parse((data as Buffer).toString('utf8')) as Frame));
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  return { frames, ws };
}

beforeAll(async () => {
  rig = await startSwitchRig();
  const started = await Promise.all([startApi({ [SIMULATED_SOFTPHONES_ENV]: '1' }), startApi()]);
  [apiA, apiB] = started;
  worker = spawnEntry('workers/main.ts', env({}));
  await waitFor(
    () => {
      if (worker.child.exitCode !== null) throw new Error(`worker exited: ${worker.out().slice(-3000)}`);
      return Promise.resolve(worker.logs.some((l) => l.msg === 'worker running') ? true : undefined);
    },
    60_000,
    'the worker process',
  );
  // The switch's directory is served by B: a softphone that A registers is authenticated there.
  rig.sim.useDirectory(`http://127.0.0.1:${apiB.port}${SWITCH_DIRECTORY_PATH}`, `freeswitch:${SWITCH_DIRECTORY_TOKEN}`);
});

afterAll(async () => {
  killSpawned();
  await rig?.close();
});

describe('live floor across API processes', () => {
  it('a websocket on API process B sees the call.* events of a call dialed through API process A and followed by the worker', async () => {
    const A = (method: string, path: string, token: string, body?: unknown) => httpRequest(apiA.port, method, path, { token, body });
    const B = (method: string, path: string, token: string, body?: unknown) => httpRequest(apiB.port, method, path, { token, body });

    const provisioned = expectOk(
      await A('POST', '/v1/admin/tenants', ADMIN_TOKEN, { name: `fanout-${randomUUID().slice(0, 8)}`, admin: { name: 'Ana', email: `ana-${randomUUID()}@example.com` } }),
      201,
    );
    const key = provisioned.body.api_key.token as string;

    // A browser seat checked in through A: A's simulated softphone registers it over A's switch link.
    const extension = `${5000 + Math.floor(Math.random() * 4000)}`;
    const agent = expectOk(await A('POST', '/v1/agents', key, { name: 'Bo', email: `bo-${randomUUID()}@example.com`, sip_extension: extension }), 201).body.agent;
    expectOk(await A('POST', '/v1/agents/checkin', key, { sip_extension: extension, device_mode: 'browser' }));
    await waitFor(
      async () => ((await B('GET', '/v1/agents', key)).body.agents as any[]).find((a) => a.id === agent.id && a.registered === true),
      30_000,
      'the seat registered',
    );

    const campaign = expectOk(await A('POST', '/v1/campaigns', key, { name: 'Fan-out', campaign_type: 'manual', caller_ids: ['+13035550100'] }), 201).body.campaign;
    expectOk(await A('POST', `/v1/campaigns/${campaign.id}/start`, key));
    const ref = `fanout-${randomUUID()}`;
    const imported = expectOk(
      await A('POST', '/v1/debts/import', key, {
        debts: [{ external_ref: ref, consumer_ref: `c-${ref}`, campaign_id: campaign.id, contacts: [{ phone_e164: numberEnding(daytimePrefix(), 1, 10), is_primary: true }] }],
      }),
    );
    expect(imported.body.failed).toEqual([]);
    const debtId = (await A('GET', `/v1/debts?external_ref=${encodeURIComponent(ref)}`, key)).body.debts[0].id as string;

    // Tickets are rows: one minted on A opens a socket on B, and the other way round.
    const onB = await floor(apiB.port, expectOk(await A('POST', '/v1/ws/ticket', key)).body.ticket as string);
    const onA = await floor(apiA.port, expectOk(await B('POST', '/v1/ws/ticket', key)).body.ticket as string);
    try {
      const dialed = expectOk(await A('POST', `/v1/campaigns/${campaign.id}/dial`, key, { debt_id: debtId, agent_id: agent.id }));
      const callId = dialed.body.call_id as string;
      // Every call.* frame carries the switch call uuid as call_id (SPEC, live floor).
      const ofCall = (frames: Frame[], event: string) => frames.find((f) => f.event === event && f.data?.call_id === callId);
      for (const socket of [onB, onA]) {
        const answered = await waitFor(() => Promise.resolve(ofCall(socket.frames, 'call.answered')), 30_000, 'call.answered on the socket');
        const ended = await waitFor(() => Promise.resolve(ofCall(socket.frames, 'call.ended')), 30_000, 'call.ended on the socket');
        expect(answered.event_id).toEqual(expect.any(String));
        expect(ended.event_id).toEqual(expect.any(String));
      }
    } finally {
      onA.ws.close();
      onB.ws.close();
    }
  });
});
