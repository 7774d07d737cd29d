import { Client, Connection } from '@temporalio/client';
import { loadConfig } from '../src/config';
import { createLogger } from '../src/lib/logger';
import { createDeps } from '../src/runtime';
import { createEslManager } from '../src/switch/esl';
import { createWorker } from './worker';

/**
 * A worker on its own (`npm run worker`), for deployments that scale workers apart from the API.
 * Needs TEMPORAL_ADDRESS and the switch (ESL_HOST, ESL_PORT, ESL_PASSWORD): the dial loop's
 * activities place calls and the worker relays call events. Migrations are the API's job.
 */
async function main(): Promise<void> {
  const config = loadConfig();
  const logger = createLogger(config.LOG_LEVEL, { role: 'worker' });
  if (!config.TEMPORAL_ADDRESS) throw new Error('TEMPORAL_ADDRESS is required for a standalone worker');
  if (!config.ESL_HOST) throw new Error('ESL_HOST is required for a standalone worker (the switch it places calls on)');
  const connection = await Connection.connect({ address: config.TEMPORAL_ADDRESS });
  const esl = createEslManager({
    host: config.ESL_HOST,
    port: config.ESL_PORT ?? 8021,
    password: config.ESL_PASSWORD ?? 'ClueCon',
    logger: logger.child({ component: 'esl' }),
  });
  const deps = await createDeps(config, logger, new Client({ connection, namespace: config.TEMPORAL_NAMESPACE }), esl);
  const { worker, connection: workerConnection, stopRelay } = await createWorker(deps, {
    address: config.TEMPORAL_ADDRESS,
    namespace: config.TEMPORAL_NAMESPACE,
    taskQueue: config.TEMPORAL_TASK_QUEUE,
    workflowBundlePath: config.WORKFLOW_BUNDLE_PATH,
  });
  // The SDK installs SIGINT/SIGTERM handlers that shut the worker down gracefully.
  await worker.run();
  await stopRelay();
  await esl.close();
  await workerConnection.close();
  await connection.close();
  await deps.db.close();
}

main().catch((err: unknown) => {
  process.stderr.write(`worker failed: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
