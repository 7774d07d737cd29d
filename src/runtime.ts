import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { serve, type ServerType } from '@hono/node-server';
import type { Client as TemporalClient } from '@temporalio/client';
import { createApp } from './app';
import type { Config } from './config';
import type { AppDeps } from './deps';
import { CryptoBox } from './lib/crypto-box';
import { createDatabase } from './lib/db';
import { systemResolver } from './lib/egress';
import type { Logger } from './lib/logger';
import { createMailer } from './lib/mailer';
import type { Metrics } from './lib/metrics';
import { createDecoyHash } from './lib/passwords';
import { RateLimits } from './lib/rate-limit';
import { attachLiveFloor } from './modules/live/live-floor';
import type { EslManager } from './switch/esl';

/**
 * The key that encrypts values at rest. Production sets APP_ENCRYPTION_KEY; a development machine
 * gets a random key kept in the git-ignored data folder so restarts can still decrypt.
 */
export function resolveEncryptionKey(config: Config, logger: Logger): string {
  if (config.APP_ENCRYPTION_KEY) return config.APP_ENCRYPTION_KEY;
  const file = path.join(config.DATA_DIR, 'app-encryption.key');
  if (!existsSync(file)) {
    mkdirSync(config.DATA_DIR, { recursive: true });
    writeFileSync(file, randomBytes(32).toString('base64'), { mode: 0o600 });
    logger.warn({ file }, 'APP_ENCRYPTION_KEY is not set: generated a local key (set it explicitly in production)');
  }
  return readFileSync(file, 'utf8').trim();
}

export async function createDeps(config: Config, logger: Logger, temporal: TemporalClient | null, esl: EslManager | null = null): Promise<AppDeps> {
  const db = createDatabase(config.appDatabaseUrl, config.DB_POOL_MAX);
  const box = new CryptoBox(resolveEncryptionKey(config, logger));
  return {
    config,
    db,
    logger,
    box,
    temporal,
    esl,
    resolver: systemResolver,
    rateLimits: new RateLimits(db.pool),
    mailer: createMailer({ smtpUrl: config.SMTP_URL, from: config.MAIL_FROM, box, logger }),
    decoyPasswordHash: await createDecoyHash(config.PASSWORD_PBKDF2_ITERATIONS),
  };
}

export interface HttpServer {
  server: ServerType;
  port: number;
  close(): Promise<void>;
}

/**
 * Serves the API and its websocket live floor; close() closes the sockets (an upgraded socket would
 * hold server.close() open), stops accepting and waits for in-flight requests to finish.
 */
export function startHttpServer(deps: AppDeps, metrics: Metrics, port: number, hostname: string): Promise<HttpServer> {
  const app = createApp(deps, metrics.http);
  return new Promise((resolve, reject) => {
    const server = serve({ fetch: app.fetch, port, hostname }, (info) => {
      resolve({
        server,
        port: info.port,
        close: async () => {
          await live.close();
          await new Promise<void>((done) => {
            server.close(() => done());
            (server as unknown as { closeIdleConnections?: () => void }).closeIdleConnections?.();
          });
        },
      });
    });
    const live = attachLiveFloor(server, deps, metrics.registry);
    server.once('error', (err: Error) => {
      void live.close();
      reject(err);
    });
  });
}
