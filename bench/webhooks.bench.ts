import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { Client as TemporalClient, Connection } from '@temporalio/client';
import { Client } from 'pg';
import { loadConfig, ROOT_DIR } from '../src/config';
import { emitEvent } from '../src/lib/events';
import { createLogger } from '../src/lib/logger';
import { withTenantSql } from '../src/lib/tenancy';
import { signatureHeader, verifySignature } from '../src/modules/webhooks/webhook-signature';
import { ensureTemporalBinary, freePort, readTemporalDevConfig, startTemporalDevServer } from '../src/platform/temporal-dev';
import { createDeps } from '../src/runtime';
import { createWorker } from '../workers/worker';
import { argNumber, freshDatabase, machineLine, percentile } from './support';

/**
 * `npm run bench:webhooks`: outbound webhook delivery end to end. A loopback receiver (its origin
 * in EGRESS_ALLOWLIST), N endpoints (one per tenant), and 10,000 events emitted with emitEvent in
 * committed transactions of `batch` events, round robin over the tenants. Delivery is the real
 * path: the dispatcher workflow on a real Temporal dev server, a worker in this process, the
 * outbox claim, signing, HTTP, and the attempt and state writes. Reports deliveries per second and
 * the time from each event's commit to its receipt (the receiver parses event_id), and checks
 * that every event arrived exactly once with a valid signature.
 * Two modes: live (default), events committed by `emitters` concurrent writers while the
 * dispatcher delivers, which gives the latency; --backlog, every event committed before the worker
 * starts, which gives the dispatcher's throughput alone.
 * Flags: --events=10000 --endpoints=4 --batch=50 --emitters=4 --rate=0 (events/s, 0 = as fast as
 * they commit) --backlog
 */
const DATABASE_URL = process.env.WEBHOOK_BENCH_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/dialer_bench_webhooks';


async function main(): Promise<void> {
  const events = argNumber('events', 10_000);
  const endpointCount = argNumber('endpoints', 4);
  const batch = argNumber('batch', 50);
  const rate = argNumber('rate', 0);
  const emitters = argNumber('emitters', 4);
  const backlog = process.argv.includes('--backlog');

  process.stdout.write(`machine: ${machineLine()}\n`);
  await freshDatabase(DATABASE_URL);

  // The receiver: every request is one delivery; the first receipt of an event_id is its latency.
  const committedAt = new Map<string, number>();
  const receivedAt = new Map<string, number>();
  const deliveryIds = new Set<string>();
  let requests = 0;
  let badSignatures = 0;
  const secrets: string[] = [];
  let allReceived: () => void = () => undefined;
  const done = new Promise<void>((resolve) => (allReceived = resolve));
  const receiver = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const now = performance.now();
      requests += 1;
      const body = Buffer.concat(chunks);
      const eventId = (JSON.parse(body.toString('utf8')) as { event_id: string }).event_id;
      if (!receivedAt.has(eventId)) receivedAt.set(eventId, now);
      deliveryIds.add(String(req.headers['x-dd-delivery-id']));
      // Verifying costs the receiver CPU it shares with the dispatcher: one request in 20 is checked.
      if (requests % 20 === 0 && verifySignature(req.headers['x-dd-signature'] as string, body, secrets) !== 'ok') badSignatures += 1;
      res.writeHead(204);
      res.end();
      if (receivedAt.size === events) allReceived();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;

  const devConfig = readTemporalDevConfig();
  const binary = ensureTemporalBinary(path.join(ROOT_DIR, '.tools'), devConfig.cli, (m) => process.stdout.write(`${m}\n`));
  const temporalServer = await startTemporalDevServer({ binary, config: devConfig.server, port: await freePort(), uiPort: await freePort(), dbFile: null, headless: true });
  const taskQueue = `bench-webhooks-${randomUUID()}`;
  const config = loadConfig({
    ...process.env,
    DATABASE_URL,
    APP_ENCRYPTION_KEY: 'bench-key',
    EGRESS_ALLOWLIST: origin,
    TEMPORAL_ADDRESS: temporalServer.address,
    TEMPORAL_NAMESPACE: temporalServer.namespace,
    TEMPORAL_TASK_QUEUE: taskQueue,
    LOG_LEVEL: 'warn',
    PORT: '0',
  });
  const logger = createLogger(config.LOG_LEVEL);
  const connection = await Connection.connect({ address: temporalServer.address });
  const temporal = new TemporalClient({ connection, namespace: temporalServer.namespace });
  const deps = await createDeps(config, logger, temporal);

  // Tenants and endpoints, written as the owner would provision them.
  const owner = new Client({ connectionString: DATABASE_URL });
  await owner.connect();
  const tenants: string[] = [];
  for (let i = 0; i < endpointCount; i += 1) {
    const tenantId = randomUUID();
    await owner.query('INSERT INTO tenants (id, account_id, name) VALUES ($1, $2, $3)', [tenantId, randomUUID(), `bench-webhooks-${i}`]);
    tenants.push(tenantId);
  }
  await owner.end();
  for (const [i, tenantId] of tenants.entries()) {
    const secret = `whsec_bench${i}${randomUUID().replace(/-/g, '')}`;
    secrets.push(secret);
    await withTenantSql(deps.db, tenantId, (sql) =>
      sql.query(`INSERT INTO webhook_endpoints (tenant_id, url, events, secret_ciphertext, secret_hint) VALUES ($1, $2, $3, $4, $5)`, [
        tenantId,
        `${origin}/hooks/${i}`,
        ['promise.recorded'],
        deps.box.encrypt(secret),
        secret.slice(-4),
      ]),
    );
  }
  // Sanity: the signature the receiver checks is the one the service makes.
  if (verifySignature(signatureHeader(secrets[0]!, '{}', Math.floor(Date.now() / 1000)), '{}', secrets) !== 'ok') throw new Error('signature self-check failed');

  const emitAll = async () => {
    let next = 0;
    let batchNo = 0;
    const emitter = async () => {
      while (next < events) {
        const from = next;
        const n = Math.min(batch, events - from);
        next += n;
        const tenantId = tenants[batchNo % tenants.length]!;
        batchNo += 1;
        if (rate > 0) {
          const wait = started + (from / rate) * 1000 - performance.now();
          if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        }
        const ids = Array.from({ length: n }, (_, k) => `bench-${from + k}`);
        await withTenantSql(deps.db, tenantId, async (sql) => {
          for (const id of ids) {
            await emitEvent(sql, tenantId, { event: 'promise.recorded', eventId: id, occurredAt: new Date(), data: { id, amount_cents: 1000, currency: 'USD', status: 'pending' } });
          }
        });
        const at = performance.now();
        for (const id of ids) committedAt.set(id, at);
      }
    };
    await Promise.all(Array.from({ length: emitters }, emitter));
  };

  let started = performance.now();
  let emitDone: number;
  let handle: Awaited<ReturnType<typeof createWorker>>;
  const describe = `${events} events over ${endpointCount} endpoints in transactions of ${batch}, ${emitters} emitters${rate ? `, paced at ${rate}/s` : ''}`;
  if (backlog) {
    // Throughput of the dispatcher alone: the whole backlog is committed before it starts.
    process.stdout.write(`backlog: emitting ${describe}, before the worker starts\n`);
    await emitAll();
    emitDone = performance.now();
    process.stdout.write(`emitted in ${((emitDone - started) / 1000).toFixed(2)} s; bundling workflows and starting the worker (with the dispatcher)...\n`);
    handle = await createWorker(deps, { address: temporalServer.address, namespace: temporalServer.namespace, taskQueue });
    started = performance.now();
  } else {
    process.stdout.write('bundling workflows and starting the worker (with the dispatcher)...\n');
    handle = await createWorker(deps, { address: temporalServer.address, namespace: temporalServer.namespace, taskQueue });
  }
  const running = handle.worker.run();
  if (!backlog) {
    process.stdout.write(`live: emitting ${describe}, while the dispatcher delivers\n`);
    started = performance.now();
    await emitAll();
    emitDone = performance.now();
  }

  const timeout = setTimeout(() => allReceived(), 600_000);
  await done;
  clearTimeout(timeout);
  const finished = performance.now();

  const latencies = [...receivedAt.entries()].map(([id, at]) => at - committedAt.get(id)!).sort((a, b) => a - b);
  const seconds = (finished - started) / 1000;
  const out = [
    `events ${events}, endpoints ${endpointCount}, received ${receivedAt.size} distinct, ${requests} requests, ${deliveryIds.size} delivery ids, bad signatures ${badSignatures}`,
    backlog
      ? `delivered the backlog in ${seconds.toFixed(2)} s from the worker's start: ${Math.round(receivedAt.size / seconds)} deliveries/s`
      : `emitted in ${((emitDone! - started) / 1000).toFixed(2)} s (${Math.round(events / ((emitDone! - started) / 1000))} events/s committed); delivered in ${seconds.toFixed(2)} s from the first commit: ${Math.round(receivedAt.size / seconds)} deliveries/s`,
    `commit to receipt${backlog ? ' (includes the wait in the backlog)' : ''}: p50 ${percentile(latencies, 50).toFixed(0)} ms, p90 ${percentile(latencies, 90).toFixed(0)} ms, p99 ${percentile(latencies, 99).toFixed(0)} ms, max ${latencies.at(-1)!.toFixed(0)} ms`,
  ];
  process.stdout.write(`${out.join('\n')}\n`);

  handle.shutdown();
  await running;
  await handle.stopRelay();
  await handle.connection.close();
  await deps.db.close();
  await connection.close();
  await temporalServer.stop();
  receiver.closeAllConnections();
  await new Promise((resolve) => receiver.close(resolve));
  if (receivedAt.size !== events || requests !== events || badSignatures > 0) {
    process.stderr.write('FAILED: every event must arrive exactly once with a valid signature\n');
    process.exitCode = 1;
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
