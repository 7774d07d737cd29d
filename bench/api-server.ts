import cluster from 'node:cluster';
import { loadConfig } from '../src/config';
import { createLogger } from '../src/lib/logger';
import { createMetrics } from '../src/lib/metrics';
import { createDeps, startHttpServer } from '../src/runtime';

/**
 * The HTTP API alone (no worker, no Temporal), as the benchmarks load it. API_PROCESSES > 1 runs
 * that many processes sharing the port, the way a deployment scales the API horizontally (rate
 * limits and revocation live in PostgreSQL, so processes share nothing else).
 */
const processes = Math.max(1, Number(process.env.API_PROCESSES ?? '1'));

async function serveOne(): Promise<void> {
  const config = loadConfig();
  const deps = await createDeps(config, createLogger(config.LOG_LEVEL), null);
  const server = await startHttpServer(deps, createMetrics(), config.PORT, '127.0.0.1');
  process.send?.({ ready: true, port: server.port });
  process.once('SIGTERM', () => {
    void server.close().then(() => deps.db.close()).then(() => process.exit(0));
  });
}

async function main(): Promise<void> {
  if (processes === 1 || !cluster.isPrimary) return serveOne();
  let ready = 0;
  for (let i = 0; i < processes; i += 1) {
    const worker = cluster.fork();
    worker.on('message', (msg: { ready?: boolean; port?: number }) => {
      ready += msg.ready ? 1 : 0;
      if (ready === processes) process.send?.({ ready: true, port: msg.port });
    });
  }
  process.once('SIGTERM', () => {
    for (const worker of Object.values(cluster.workers ?? {})) worker?.kill('SIGTERM');
    process.exit(0);
  });
}

main().catch((err: unknown) => {
  process.stderr.write(`bench api server failed: ${String(err)}\n`);
  process.exit(1);
});
