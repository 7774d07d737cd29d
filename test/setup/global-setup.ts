import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { bundleWorkflowCode, DefaultLogger } from '@temporalio/worker';
import { ROOT_DIR } from '../../src/config';
import { dropDatabase } from '../../src/db/bootstrap';
import { prepareDatabase } from '../../src/db/migrate';
import { ensureTemporalBinary, freePort, readTemporalDevConfig, startTemporalDevServer, type DevServer } from '../../src/platform/temporal-dev';
import { WORKFLOWS_PATH } from '../../workers/worker';

declare global {
  var __TEMPORAL_DEV_SERVER__: DevServer | undefined;
}

const TEST_DB = process.env.TEST_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/dialer_test';

/**
 * Real PostgreSQL (a fresh dialer_test database, migrated as the owner role) and a real Temporal
 * dev server (headless, in memory, on a free port) for the whole integration run.
 */
export default async function globalSetup(): Promise<void> {
  await dropDatabase(TEST_DB);
  await prepareDatabase(TEST_DB);

  const dataDir = path.join(ROOT_DIR, '.data', 'test');
  mkdirSync(dataDir, { recursive: true });
  const devConfig = readTemporalDevConfig();
  const binary = ensureTemporalBinary(path.join(ROOT_DIR, '.tools'), devConfig.cli, (m) => process.stdout.write(`${m}\n`));
  const server = await startTemporalDevServer({ binary, config: devConfig.server, port: await freePort(), dbFile: null, headless: true });
  globalThis.__TEMPORAL_DEV_SERVER__ = server;

  const bundle = await bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, logger: new DefaultLogger('WARN') });
  const bundlePath = path.join(dataDir, `workflow-bundle-${process.pid}.js`);
  writeFileSync(bundlePath, bundle.code);

  process.env.TEST_DATABASE_URL = TEST_DB;
  process.env.TEST_TEMPORAL_ADDRESS = server.address;
  process.env.TEST_TEMPORAL_NAMESPACE = server.namespace;
  process.env.TEST_WORKFLOW_BUNDLE = bundlePath;
}
