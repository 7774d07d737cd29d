import { Client, Connection } from '@temporalio/client';
import { loadConfig } from '../../src/config';
import { createLogger } from '../../src/lib/logger';
import { createMetrics } from '../../src/lib/metrics';
import { createDeps, startHttpServer } from '../../src/runtime';
import { createEslManager } from '../../src/switch/esl';

/**
 * The HTTP API alone, without the worker `src/main.ts` embeds: killing it must leave dialing to the
 * standalone worker, which is what the API-kill scenario proves.
 */
async function main(): Promise<void> {
  const config = loadConfig();
  const logger = createLogger(config.LOG_LEVEL, { role: 'api' });
  const connection = await Connection.connect({ address: config.TEMPORAL_ADDRESS! });
  const esl = createEslManager({ host: config.ESL_HOST!, port: config.ESL_PORT ?? 8021, password: config.ESL_PASSWORD ?? 'ClueCon', logger });
  const deps = await createDeps(config, logger, new Client({ connection, namespace: config.TEMPORAL_NAMESPACE }), esl);
  const http = await startHttpServer(deps, createMetrics(), config.PORT, '127.0.0.1');
  process.stdout.write(`api listening on ${http.port}\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`api start-up failed: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
