import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import path from 'node:path';
import { serve, type ServerType } from '@hono/node-server';
import type { Client as TemporalClient } from '@temporalio/client';
import { createApp } from './app';
import type { Config } from './config';
import type { AppDeps } from './deps';
import { createCredentialCache } from './lib/auth';
import { CredentialCache } from './lib/credential-cache';
import type { TenantRecord } from './modules/tenants/tenant.views';
import { CryptoBox } from './lib/crypto-box';
import { createDatabase } from './lib/db';
import { systemResolver, type Resolver } from './lib/egress';
import { createObjectStore, UrlSigner, type ObjectStore } from './lib/object-store';
import type { Logger } from './lib/logger';
import { createMailer } from './lib/mailer';
import type { Metrics } from './lib/metrics';
import { createDecoyHash } from './lib/passwords';
import { RateLimits } from './lib/rate-limit';
import { attachLiveFloor } from './modules/live/live-floor';
import type { EslManager } from './switch/esl';

/** The local-key warning is said once per process, however many deps a process builds. */
let warnedLocalKey = false;

/**
 * The key that encrypts values at rest. Production must set APP_ENCRYPTION_KEY (loadConfig refuses
 * to start without it); a development machine gets a random key kept in the git-ignored data
 * folder so restarts can still decrypt, and each process says so once.
 */
export function resolveEncryptionKey(config: Config, logger: Logger): string {
  if (config.APP_ENCRYPTION_KEY) return config.APP_ENCRYPTION_KEY;
  const file = path.join(config.DATA_DIR, 'app-encryption.key');
  if (!existsSync(file)) {
    mkdirSync(config.DATA_DIR, { recursive: true });
    writeFileSync(file, randomBytes(32).toString('base64'), { mode: 0o600 });
  }
  if (!warnedLocalKey) {
    warnedLocalKey = true;
    logger.warn({ file }, 'APP_ENCRYPTION_KEY is not set: using a key local to this machine (NODE_ENV=production refuses to start without one)');
  }
  return readFileSync(file, 'utf8').trim();
}

/** The deployment's object store (OBJECT_STORE); the S3 client re-checks egress on every connection. */
export function createStore(config: Config, secret: string, resolver: Resolver): { store: ObjectStore; signer: UrlSigner | null } {
  if (config.OBJECT_STORE === 's3') {
    if (!config.S3_BUCKET) throw new Error('OBJECT_STORE=s3 needs S3_BUCKET');
    const credentials =
      config.S3_ACCESS_KEY_ID && config.S3_SECRET_ACCESS_KEY
        ? { accessKeyId: config.S3_ACCESS_KEY_ID, secretAccessKey: config.S3_SECRET_ACCESS_KEY, sessionToken: config.S3_SESSION_TOKEN }
        : undefined;
    const store = createObjectStore({
      kind: 's3',
      bucket: config.S3_BUCKET,
      region: config.S3_REGION,
      endpoint: config.S3_ENDPOINT,
      forcePathStyle: config.S3_FORCE_PATH_STYLE === 'true',
      credentials,
      keyPrefix: config.S3_KEY_PREFIX,
      egress: { allowlist: config.egressAllowlist, resolve: resolver },
    });
    return { store, signer: null };
  }
  const signer = new UrlSigner({ secret, publicBaseUrl: config.publicBaseUrl });
  const store = createObjectStore({
    kind: 'local',
    baseDir: config.OBJECT_STORE_DIR ?? path.join(config.DATA_DIR, 'objects'),
    signer,
    minFreeBytes: config.OBJECT_STORE_MIN_FREE_BYTES,
  });
  return { store, signer };
}

export async function createDeps(config: Config, logger: Logger, temporal: TemporalClient | null, esl: EslManager | null = null): Promise<AppDeps> {
  const db = createDatabase(config.appDatabaseUrl, config.DB_POOL_MAX);
  const secret = resolveEncryptionKey(config, logger);
  const box = new CryptoBox(secret, config.encryptionKeysPrevious);
  const { store, signer } = createStore(config, secret, systemResolver);
  return {
    config,
    db,
    logger,
    box,
    temporal,
    esl,
    resolver: systemResolver,
    objectStore: store,
    fileSigner: signer,
    rateLimits: new RateLimits(db.pool),
    mailer: createMailer({ smtpUrl: config.SMTP_URL, from: config.MAIL_FROM, box, logger }),
    decoyPasswordHash: await createDecoyHash(config.PASSWORD_PBKDF2_ITERATIONS),
    credentials: createCredentialCache(config.CREDENTIAL_CACHE_TTL_MS),
    tenantRows: new CredentialCache<TenantRecord>({ ttlMs: config.CREDENTIAL_CACHE_TTL_MS }),
  };
}

/** Room after the grace for the steps that follow the drain (closing links and pools). */
const SHUTDOWN_MARGIN_MS = 10_000;

export interface HttpServer {
  server: ServerType;
  port: number;
  /**
   * Stops accepting, closes the websockets, lets in-flight requests finish and resolves when the
   * last connection is gone; connections still busy after `graceMs` are cut.
   */
  close(graceMs?: number): Promise<void>;
}

/**
 * Serves the API and its websocket live floor. Responses in flight are tracked so a draining
 * server can drop each keep-alive connection as soon as its last response is out, instead of
 * waiting for the client to hang up.
 */
export function startHttpServer(deps: AppDeps, metrics: Metrics, port: number, hostname: string): Promise<HttpServer> {
  const app = createApp(deps, metrics.http);
  const inFlight = new Set<ServerResponse>();
  return new Promise((resolve, reject) => {
    const server = serve({ fetch: app.fetch, port, hostname }, (info) => {
      resolve({
        server,
        port: info.port,
        close: async (graceMs = deps.config.SHUTDOWN_GRACE_MS) => {
          const http = server as Server;
          await live.close();
          await new Promise<void>((done) => {
            const cut = setTimeout(() => http.closeAllConnections(), graceMs);
            http.close(() => {
              clearTimeout(cut);
              done();
            });
            http.closeIdleConnections();
            for (const res of inFlight) res.once('close', () => setImmediate(() => http.closeIdleConnections()));
          });
        },
      });
    });
    server.on('request', (_req: IncomingMessage, res: ServerResponse) => {
      inFlight.add(res);
      res.once('close', () => inFlight.delete(res));
    });
    const live = attachLiveFloor(server, deps, metrics.registry);
    server.once('error', (err: Error) => {
      void live.close();
      reject(err);
    });
  });
}



export interface ShutdownStep {
  name: string;
  /**
   * Started for every step the moment the signal arrives, so the drains that are bounded by the
   * grace (HTTP requests, the worker's activities) run side by side instead of one after another.
   */
  begin?: () => void;
  run: () => Promise<void>;
  /**
   * Said at a forced exit, synchronously, for what must not outlive this process (child
   * processes, the embedded database server).
   */
  force?: () => void;
}

export interface ShutdownOptions {
  /** Signals that begin the shutdown, and force it when one comes again; default SIGTERM and SIGINT. */
  signals?: NodeJS.Signals[];
  /**
   * Signals taken and ignored: a supervised child leaves the terminal's Ctrl-C (which reaches the
   * whole process group) to its supervisor, which stops the processes in their order.
   */
  ignore?: NodeJS.Signals[];
  /** Room after the grace before the exit is forced; default SHUTDOWN_MARGIN_MS. */
  marginMs?: number;
}

/**
 * A signal begins every step, then runs them in order, logging each, then exits 0 (1 when a step
 * failed or the shutdown was asked for a failure). A second signal, or steps still running
 * `graceMs` plus a margin later, force exit 1: an orchestrator that already waited must not be
 * kept waiting on a stuck close. Answers a trigger for shutdowns that no signal starts (a
 * supervisor gone, a child process that keeps failing).
 */
export function onShutdownSignals(
  logger: Logger,
  graceMs: number,
  steps: () => ShutdownStep[],
  options: ShutdownOptions = {},
): (why: string, failure?: boolean) => void {
  let stopping = false;
  let ordered: ShutdownStep[] = [];
  // Logs to a pipe may still be queued: out first, in order, so the last lines say how it ended.
  const exit = (code: number) => logger.flush(() => process.exit(code));
  const force = (why: string) => {
    logger.error({ why }, 'forced exit');
    for (const step of stopping ? ordered : steps()) {
      try {
        step.force?.();
      } catch (err) {
        logger.error({ err, step: step.name }, 'forced stop failed');
      }
    }
    exit(1);
  };
  const shutdown = async (trigger: Record<string, unknown>, failure: boolean) => {
    stopping = true;
    logger.info({ ...trigger, grace_ms: graceMs }, 'shutting down');
    setTimeout(() => force('shutdown overran the grace period'), graceMs + (options.marginMs ?? SHUTDOWN_MARGIN_MS)).unref();
    let failed = failure;
    ordered = steps();
    for (const step of ordered) step.begin?.();
    for (const [i, step] of ordered.entries()) {
      logger.info({ step: step.name, n: i + 1, of: ordered.length }, 'shutdown step');
      await step.run().catch((err: unknown) => {
        failed = true;
        logger.error({ err, step: step.name }, 'shutdown step failed');
      });
    }
    logger.info('stopped');
    exit(failed ? 1 : 0);
  };
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) return force(`second signal ${signal}`);
    void shutdown({ signal }, false);
  };
  for (const signal of options.signals ?? ['SIGTERM', 'SIGINT']) process.on(signal, onSignal);
  for (const signal of options.ignore ?? []) process.on(signal, () => logger.debug({ signal }, 'signal left to the supervisor'));
  return (why, failure = false) => {
    if (!stopping) void shutdown({ why }, failure);
  };
}
