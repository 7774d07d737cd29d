import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { api, argNumber, freshDatabase, machineLine, percentile, startBenchApi } from './support';

/**
 * `npm run bench:sms`: the SMS send path and its delivery receipts over loopback HTTP, on a fresh
 * database, the API in a child process with SMS_PROVIDER_ADAPTER=mock.
 * Seeds `debts` debts with one mobile contact each (the import grants SMS consent) on numbers of a
 * zone where it is daytime now (the engine's quiet-hours gate uses the real clock), registers a
 * mock provider of the tenant with a webhook secret (it resolves before the deployment one), then
 * (a) `sends` POST /v1/sms/messages from `concurrency` clients, one debt per message: the full
 * path (tenant send lock, engine decision and evidence, queued row, mock provider, sent
 * transition); (b) one signed delivery receipt per sent message to
 * POST /webhooks/sms/{provider_id}/dlr from the same number of clients.
 * Flags: --sends=2000 --concurrency=16 --debts=<sends + 50> (the 50 beyond `sends` warm up the API, unmeasured)
 */
const DATABASE_URL = process.env.SMS_BENCH_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/dialer_bench_sms';

/** Prefixes with room for 10,000 numbers each; the one whose zone is at 09:00-19:00 now is used. */
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

function daytime(at = new Date()): { prefix: string; zone: string } {
  const found = DAYTIME_PREFIXES.find((p) => {
    const h = localHour(p.zone, at);
    return h >= 9 && h < 19;
  });
  if (!found) throw new Error('no daytime zone among the bench prefixes');
  return found;
}

/** The i-th number of the prefix; the mock provider refuses numbers ending in 99, so those are skipped. */
function numberOf(prefix: string, i: number): string {
  const serial = Math.floor(i / 99) * 100 + (i % 99);
  if (serial >= 10_000) throw new Error('at most 9,900 numbers per prefix');
  return `${prefix}${String(serial).padStart(4, '0')}`;
}


/** `count` requests from `concurrency` clients; each answer's status is checked by `ok`. */
async function load(count: number, concurrency: number, request: (i: number) => Promise<boolean>) {
  const latencies: number[] = [];
  let failures = 0;
  let next = 0;
  const started = performance.now();
  const client = async () => {
    while (next < count) {
      const i = next;
      next += 1;
      const t0 = performance.now();
      const ok = await request(i);
      latencies.push(performance.now() - t0);
      if (!ok) failures += 1;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, client));
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  return {
    requests: count,
    failures,
    seconds: Number(seconds.toFixed(2)),
    per_s: Math.round(count / seconds),
    latency_ms: { p50: Number(percentile(latencies, 50).toFixed(1)), p90: Number(percentile(latencies, 90).toFixed(1)), p99: Number(percentile(latencies, 99).toFixed(1)), max: Number(latencies.at(-1)!.toFixed(1)) },
  };
}

async function main(): Promise<void> {
  const sends = argNumber('sends', 2000);
  const concurrency = argNumber('concurrency', 16);
  const debts = Math.max(argNumber('debts', sends + 50), sends);
  const { prefix, zone } = daytime();

  await freshDatabase(DATABASE_URL);
  const server = await startBenchApi(1, { databaseUrl: DATABASE_URL, env: { SMS_PROVIDER_ADAPTER: 'mock' } });
  try {
    const created = await api(server.port, 'POST', '/v1/admin/tenants', server.adminToken, {
      name: `sms-bench-${randomUUID().slice(0, 8)}`,
      admin: { name: 'Bench', email: `bench-${randomUUID().slice(0, 8)}@example.com` },
    });
    if (created.status !== 201) throw new Error(`provisioning failed: ${created.status}`);
    const key: string = created.body.api_key.token;
    const tenantId: string = created.body.tenant.id;

    const secret = randomBytes(24).toString('hex');
    const provider = await api(server.port, 'POST', '/v1/sms/providers', key, { adapter: 'mock', region: 'us', name: 'bench mock', webhook_secret: secret });
    if (provider.status !== 201) throw new Error(`provider failed: ${provider.status} ${JSON.stringify(provider.body)}`);
    const providerId: string = provider.body.sms_provider.id;

    const imported = await api(server.port, 'POST', '/v1/debts/import', key, {
      debts: Array.from({ length: debts }, (_, i) => ({
        external_ref: `sms-${i}`,
        consumer_ref: `consumer-${i}`,
        amount_cents: 10_000 + i,
        currency: 'USD',
        contacts: [{ phone_e164: numberOf(prefix, i), line_type: 'mobile', timezone: zone, is_primary: true }],
      })),
    });
    if (imported.status !== 200 || imported.body.imported !== debts) throw new Error(`import failed: ${imported.status} ${JSON.stringify(imported.body).slice(0, 500)}`);
    const owner = new Client({ connectionString: DATABASE_URL });
    await owner.connect();
    const debtIds = new Map<string, string>();
    try {
      const { rows } = await owner.query<{ id: string; external_ref: string }>('SELECT id, external_ref FROM debts WHERE tenant_id = $1', [tenantId]);
      for (const r of rows) debtIds.set(r.external_ref, r.id);
    } finally {
      await owner.end();
    }

    // One message per debt: warm-up on the last debts (JIT, pool), measured sends on the first `sends`.
    const warm = Math.min(50, debts - sends);
    const base = `http://127.0.0.1:${server.port}`;
    const auth = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    const providerMessageIds: string[] = [];
    const refusals = new Map<string, number>();
    const send = async (i: number): Promise<boolean> => {
      const res = await fetch(`${base}/v1/sms/messages`, {
        method: 'POST',
        headers: auth,
        body: JSON.stringify({ to: numberOf(prefix, i), body: 'Your statement is ready. Reply STOP to opt out.', debt_id: debtIds.get(`sms-${i}`), timezone: zone, client_ref: `bench-${i}` }),
      });
      const body = (await res.json()) as { sms_message?: { transitions: Array<{ provider_message_id: string | null }> }; error?: { code: string } };
      if (res.status !== 202) {
        const code = `${res.status} ${body.error?.code ?? ''}`;
        refusals.set(code, (refusals.get(code) ?? 0) + 1);
        return false;
      }
      const id = body.sms_message?.transitions.find((t) => t.provider_message_id)?.provider_message_id;
      if (id) providerMessageIds.push(id);
      return true;
    };
    if (warm > 0) await load(warm, Math.min(concurrency, warm), (i) => send(sends + i));
    providerMessageIds.length = 0;

    process.stdout.write(`sending ${sends} messages from ${concurrency} clients (numbers ${prefix}…, ${zone})\n`);
    const sent = await load(sends, concurrency, send);

    const receipts = providerMessageIds.slice();
    const outcomes = new Map<string, number>();
    const receipt = async (i: number): Promise<boolean> => {
      const raw = JSON.stringify({ message_id: receipts[i], status: 'delivered', timestamp: new Date().toISOString() });
      const res = await fetch(`${base}/webhooks/sms/${providerId}/dlr`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-dd-signature': createHmac('sha256', secret).update(raw).digest('hex') },
        body: raw,
      });
      const body = (await res.json()) as { status?: string };
      const outcome = `${res.status} ${body.status ?? ''}`;
      outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
      return res.status === 200 && body.status === 'ok';
    };
    process.stdout.write(`posting ${receipts.length} signed delivery receipts from ${concurrency} clients\n`);
    const delivered = await load(receipts.length, concurrency, receipt);

    const summary = {
      machine: machineLine(),
      zone,
      concurrency,
      sends: { route: 'POST /v1/sms/messages', ...sent, accepted_by_provider: providerMessageIds.length, refusals: Object.fromEntries(refusals) },
      receipts: { route: 'POST /webhooks/sms/{provider_id}/dlr', ...delivered, outcomes: Object.fromEntries(outcomes) },
    };
    process.stdout.write(`${JSON.stringify(summary, null, 2)}\n`);
    if (sent.failures > 0 || delivered.failures > 0 || receipts.length !== sends) process.exitCode = 1;
  } finally {
    await server.stop();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`bench failed: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
