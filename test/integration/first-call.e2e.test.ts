import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client as TemporalClient, Connection } from '@temporalio/client';
import WebSocket from 'ws';
import { campaignRunWorkflowId } from '../../workflows/ids';
import { callSessionWorkflowId } from '../../src/contracts/call-session';
import { daytimePrefix, numberEnding, waitFor } from '../helpers/dial-loop';
import { ADMIN_TOKEN, httpRequest, testEnv, type HttpResult } from '../helpers/harness';
import { killSpawned, parseBanner, spawnEntry, type Banner, type Spawned } from '../helpers/processes';

jest.setTimeout(180_000);

/**
 * README "A first call, end to end", as a new user runs it: `npm start` (src/main.ts) with the
 * embedded switch simulator and nothing else told, then the README's requests one by one. The
 * browser seat's softphone registers through the product's directory at check-in (SIM_AUTO_REGISTER
 * by default), and the progressive campaign bridges a human answer to it. The Temporal server and
 * the database are the suite's (a fresh start would start its own; the supervisor test covers that).
 */

let dataDir: string;
let start: Spawned;
let banner: Banner;
let connection: Connection;
let temporal: TemporalClient;
const taskQueue = `first-call-${randomUUID()}`;

beforeAll(async () => {
  dataDir = mkdtempSync(path.join(os.tmpdir(), 'dialer-first-call-'));
  start = spawnEntry(
    'src/main.ts',
    testEnv({
      LOG_LEVEL: 'info',
      WORKFLOW_BUNDLE_PATH: process.env.TEST_WORKFLOW_BUNDLE,
      TEMPORAL_TASK_QUEUE: taskQueue,
      METRICS_PORT: '0',
      DATA_DIR: dataDir,
      // As on a fresh machine: the bundled simulator, softphones registering by default.
      ESL_HOST: undefined,
      ESL_PORT: undefined,
      SIM_AUTO_REGISTER: undefined,
    }),
    { detached: true },
  );
  banner = await waitFor(() => Promise.resolve(parseBanner(start.out())), 120_000, `the start-up banner; got ${start.out().slice(-2000)}`);
  connection = await Connection.connect({ address: process.env.TEST_TEMPORAL_ADDRESS! });
  temporal = new TemporalClient({ connection, namespace: process.env.TEST_TEMPORAL_NAMESPACE ?? 'default' });
});

afterAll(async () => {
  if (start && start.child.exitCode === null) {
    process.kill(-start.child.pid!, 'SIGINT');
    await Promise.race([start.exited, new Promise((resolve) => setTimeout(resolve, 60_000).unref())]);
  }
  killSpawned();
  await connection?.close();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

function ok(res: HttpResult, status = 200): HttpResult {
  expect({ status: res.status, body: res.status === status ? null : res.body }).toEqual({ status, body: null });
  return res;
}

describe('npm start, a browser seat and a progressive campaign (README: a first call, end to end)', () => {
  it('bridges a human answer to the seat; the call timeline and the Temporal workflows are where the README says', async () => {
    expect(banner.switchPort).not.toBeNull();
    const api = (method: string, p: string, token: string, body?: unknown) => httpRequest(banner.port, method, p, { token, body });

    const tenant = ok(
      await api('POST', '/v1/admin/tenants', ADMIN_TOKEN, { name: `First call ${randomUUID()}`, admin: { name: 'Ana', email: `ana-${randomUUID()}@acme.example` } }),
      201,
    ).body;
    const key: string = tenant.api_key.token;
    const tenantId: string = tenant.tenant.id;

    const extension = `1${String(Math.floor(Math.random() * 100_000)).padStart(5, '0')}`;
    const agent = ok(await api('POST', '/v1/agents', key, { name: 'Bo', email: `bo-${randomUUID()}@acme.example`, sip_extension: extension }), 201).body.agent;
    ok(await api('POST', '/v1/agents/checkin', key, { sip_extension: extension, device_mode: 'browser' }));
    // The simulated softphone registered through the directory with the check-in's credential.
    await waitFor(
      async () => ((await api('GET', '/v1/agents', key)).body.agents.find((a: { id: string }) => a.id === agent.id)?.registered === true ? true : undefined),
      30_000,
      'the seat registered',
    );

    const campaign = ok(await api('POST', '/v1/campaigns', key, { name: 'Walkthrough', campaign_type: 'progressive' }), 201).body.campaign;
    const phone = numberEnding(daytimePrefix(), Math.floor(Math.random() * 100), 10);
    const imported = ok(
      await api('POST', '/v1/debts/import', key, { debts: [{ external_ref: 'A-1', consumer_ref: 'C-1', campaign_id: campaign.id, contacts: [{ phone_e164: phone }] }] }),
    ).body;
    expect(JSON.stringify(imported)).not.toContain('"error"');
    ok(await api('POST', `/v1/campaigns/${campaign.id}/start`, key));

    const callUuid: string = await waitFor(
      async () => (await api('GET', `/v1/calls?campaign_id=${campaign.id}`, key)).body.calls?.[0]?.call_uuid ?? undefined,
      60_000,
      'the campaign to place its call',
    );
    const { call, timeline } = await waitFor(
      async () => {
        const res = await api('GET', `/v1/calls/${callUuid}`, key);
        return res.status === 200 && res.body.timeline.some((e: { event: string }) => e.event === 'hangup') ? res.body : undefined;
      },
      60_000,
      'the call to end',
    );
    expect(call).toMatchObject({ call_uuid: callUuid, to_number: phone, campaign_id: campaign.id });
    const events = (timeline as Array<{ event: string } & Record<string, unknown>>).map((e) => e.event);
    for (const name of ['originate', 'ringing', 'answered', 'amd', 'bridged', 'hangup']) expect(events).toContain(name);
    expect(events.indexOf('answered')).toBeLessThan(events.indexOf('bridged'));
    expect(events.indexOf('bridged')).toBeLessThan(events.indexOf('hangup'));
    expect(timeline.find((e: { event: string }) => e.event === 'amd')).toMatchObject({ verdict: 'HUMAN' });
    expect(timeline.find((e: { event: string }) => e.event === 'bridged')).toMatchObject({ agent_id: agent.id });
    const final = await waitFor(
      async () => {
        const rows: any[] = (await api('GET', `/v1/call_attempts?campaign_id=${campaign.id}`, key)).body.call_attempts;
        return rows.find((r) => r.corrects_id === call.id && r.ended_at !== null);
      },
      30_000,
      'the final row',
    );
    expect(final).toMatchObject({ disposition: 'answered_human', agent_id: agent.id });

    // The Temporal Web UI shows these two workflows under the ids the README names.
    const run = await temporal.workflow.getHandle(campaignRunWorkflowId(tenantId, campaign.id)).describe();
    expect(run.taskQueue).toBe(taskQueue);
    const session = temporal.workflow.getHandle(callSessionWorkflowId(tenantId, callUuid));
    await session.result();
    const history = await session.fetchHistory();
    const activities = (history.events ?? []).flatMap((e) => (e.activityTaskScheduledEventAttributes?.activityType?.name ? [e.activityTaskScheduledEventAttributes.activityType.name] : []));
    expect(activities).toContain('connectAgent');
    expect((history.events ?? []).some((e) => e.workflowExecutionSignaledEventAttributes)).toBe(true);

    ok(await api('POST', `/v1/campaigns/${campaign.id}/stop`, key));
  });
  it('starts the worker\'s AI audio gateway on loopback, which takes only a signed fork of a call', async () => {
    const port = await waitFor(
      () => {
        const line = start
          .out()
          .split('\n')
          .find((l) => l.includes('AI audio gateway listening'));
        const m = line ? /"port":(\d+)/.exec(line) : null;
        return Promise.resolve(m ? Number(m[1]) : undefined);
      },
      60_000,
      'the audio gateway',
    );
    const status = await new Promise<number>((resolve, reject) => {
      const ws = new WebSocket(`ws://127.0.0.1:${port}/${randomUUID()}/${randomUUID()}/${randomUUID()}/not-a-token`, 'audio.drachtio.org');
      ws.once('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
      ws.once('open', () => reject(new Error('an unsigned fork was accepted')));
      ws.once('error', (err) => reject(err));
    });
    expect(status).toBe(401);
  });
});
