import { randomUUID } from 'node:crypto';
import { api, argNumber, machineLine, startBenchApi } from './support';

/**
 * `npm run bench:import`: POST /v1/debts/import with 10,000 debts of 2 contacts each into a fresh
 * tenant (all inserts), then the same request again (an idempotent replay: all upserts), timed end
 * to end over loopback HTTP. Flags: --debts=10000 --contacts=2 --runs=3
 */
function batch(debts: number, contacts: number, prefix: string) {
  return {
    debts: Array.from({ length: debts }, (_, i) => ({
      external_ref: `${prefix}-${i}`,
      consumer_ref: `consumer-${prefix}-${i}`,
      amount_cents: 10_000 + i,
      currency: 'USD',
      prior_attempts_7d: i % 3,
      contacts: Array.from({ length: contacts }, (_, k) => ({
        phone_e164: `+1${['303', '617', '212', '206'][k % 4]}555${String((i * contacts + k) % 10_000).padStart(4, '0')}`,
        line_type: k === 0 ? 'mobile' : 'landline',
        is_primary: k === 0,
        postal_code: k === 0 ? '11201' : '80202',
      })),
    })),
  };
}

async function main(): Promise<void> {
  const debts = argNumber('debts', 10_000);
  const contacts = argNumber('contacts', 2);
  const runs = argNumber('runs', 3);
  const server = await startBenchApi(1);
  const results: { run: number; insert_ms: number; replay_ms: number; imported: number; failed: number }[] = [];
  try {
    for (let run = 1; run <= runs; run += 1) {
      const created = await api(server.port, 'POST', '/v1/admin/tenants', server.adminToken, {
        name: `import-bench-${randomUUID().slice(0, 8)}`,
        admin: { name: 'Bench', email: `bench-${randomUUID().slice(0, 8)}@example.com` },
      });
      const key: string = created.body.api_key.token;
      const body = batch(debts, contacts, `r${run}`);
      let started = performance.now();
      const first = await api(server.port, 'POST', '/v1/debts/import', key, body);
      const insertMs = performance.now() - started;
      started = performance.now();
      const replay = await api(server.port, 'POST', '/v1/debts/import', key, body);
      const replayMs = performance.now() - started;
      if (first.status !== 200 || replay.status !== 200) throw new Error(`import failed: ${first.status} ${replay.status}`);
      results.push({ run, insert_ms: Math.round(insertMs), replay_ms: Math.round(replayMs), imported: first.body.imported, failed: first.body.failed.length });
    }
    const summary = {
      route: 'POST /v1/debts/import',
      machine: machineLine(),
      debts,
      contacts_per_debt: contacts,
      request_bytes: Buffer.byteLength(JSON.stringify(batch(debts, contacts, 'r0'))),
      runs: results,
      best_insert_ms: Math.min(...results.map((r) => r.insert_ms)),
      best_replay_ms: Math.min(...results.map((r) => r.replay_ms)),
    };
    process.stdout.write(`${JSON.stringify(summary, null, 2)}\n`);
    if (results.some((r) => r.failed > 0 || r.imported !== debts)) process.exitCode = 1;
  } finally {
    await server.stop();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`bench failed: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
