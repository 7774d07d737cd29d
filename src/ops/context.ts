import os from 'node:os';
import { Client, Connection } from '@temporalio/client';
import { loadConfig } from '../config';
import type { AppDeps } from '../deps';
import { createLogger } from '../lib/logger';
import { readTemporalDevConfig } from '../platform/temporal-dev';
import { createDeps } from '../runtime';

/** What every command runs against: the API's own deps (same database role, same config) and a Temporal client. */
export interface OpsContext {
  deps: AppDeps;
  temporal: Client;
  /** Who is at the keyboard: the actor id of the audit entries the CLI writes. */
  actor: string;
  close(): Promise<void>;
}

/** OPS_ACTOR names the operator in the audit log; without it, the login of the shell. */
export function operatorName(env: NodeJS.ProcessEnv = process.env): string {
  const named = env.OPS_ACTOR?.trim();
  if (named) return named;
  try {
    return os.userInfo().username;
  } catch {
    return 'unknown';
  }
}

/**
 * Connects like the API does (loadConfig over the same environment). Without TEMPORAL_ADDRESS the
 * CLI talks to the dev server `npm start` runs, at the address temporal-dev.yml gives it. The
 * logger is silent: --json output goes to stdout, and the CLI reports failures itself.
 */
export async function createOpsContext(env: NodeJS.ProcessEnv = process.env): Promise<OpsContext> {
  const config = loadConfig(env);
  const dev = readTemporalDevConfig().server;
  const address = config.TEMPORAL_ADDRESS ?? `${dev.ip}:${dev.port}`;
  const connection = await Connection.connect({ address, connectTimeout: '5 seconds' });
  const temporal = new Client({ connection, namespace: config.TEMPORAL_NAMESPACE });
  let deps: AppDeps;
  try {
    deps = await createDeps(config, createLogger('silent'), temporal);
  } catch (err) {
    await connection.close();
    throw err;
  }
  return {
    deps,
    temporal,
    actor: operatorName(env),
    async close() {
      await deps.db.close();
      await deps.objectStore.close();
      await connection.close();
    },
  };
}
