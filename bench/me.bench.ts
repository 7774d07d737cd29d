import { randomUUID } from 'node:crypto';
import autocannon from 'autocannon';
import { api, argNumber, machineLine, startBenchApi } from './support';

/**
 * `npm run bench:me`: requests/s and latency of an authenticated GET /v1/me under concurrent load
 * on loopback, through the credential cache (CREDENTIAL_CACHE_TTL_MS), and the run
 * proves revocation still holds: a second key revoked mid-run is refused on its very next request.
 * Flags: --connections=16 --duration=15 --processes=1 (API processes sharing the port).
 */
async function main(): Promise<void> {
  const connections = argNumber('connections', 16);
  const duration = argNumber('duration', 15);
  const processes = argNumber('processes', 1);
  const server = await startBenchApi(processes);
  try {
    const created = await api(server.port, 'POST', '/v1/admin/tenants', server.adminToken, {
      name: `bench-${randomUUID().slice(0, 8)}`,
      admin: { name: 'Bench', email: `bench-${randomUUID().slice(0, 8)}@example.com` },
    });
    if (created.status !== 201) throw new Error(`provisioning failed: ${created.status}`);
    const key: string = created.body.api_key.token;
    const url = `http://127.0.0.1:${server.port}/v1/me`;
    const headers = { authorization: `Bearer ${key}` };

    await autocannon({ url, headers, connections, duration: 2 }); // warm-up (JIT, pool)

    const revocation = (async () => {
      await new Promise((r) => setTimeout(r, (duration * 1000) / 2));
      const minted = await api(server.port, 'POST', '/v1/api_keys', key, { label: 'revoke-me' });
      const before = await api(server.port, 'GET', '/v1/me', minted.body.token);
      await api(server.port, 'DELETE', `/v1/api_keys/${minted.body.api_key.id}`, key);
      const after = await api(server.port, 'GET', '/v1/me', minted.body.token);
      return { before: before.status, after: after.status };
    })();

    const result = await autocannon({ url, headers, connections, duration });
    const revoked = await revocation;
    const summary = {
      route: 'GET /v1/me (dd_ key)',
      machine: machineLine(),
      api_processes: processes,
      connections,
      duration_s: duration,
      requests: result.requests.total,
      requests_per_s: Math.round(result.requests.average),
      latency_ms: { p50: result.latency.p50, p90: result.latency.p90, p99: result.latency.p99, max: result.latency.max },
      non_2xx: result.non2xx,
      errors: result.errors,
      revoked_key: `${revoked.before} before revocation, ${revoked.after} on the next request`,
    };
    process.stdout.write(`${JSON.stringify(summary, null, 2)}\n`);
    if (revoked.after !== 401 || result.non2xx > 0 || result.errors > 0) process.exitCode = 1;
  } finally {
    await server.stop();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`bench failed: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
