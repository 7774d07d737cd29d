/**
 * Runs Schemathesis against the published OpenAPI document of a private instance of the whole
 * product (migrations, a private Temporal dev server, the worker, the switch simulator, the HTTP
 * API), authenticated with a tenant API key, with every check and every phase; the key-revocation
 * route runs in a pass of its own with a spare key, and /v1/admin/* in a pass with the operator bearer. Reports (JUnit and NDJSON) land in .data/conformance/.
 *
 *   npm run conformance -- [--duration <seconds>] [--admin-duration <seconds>] [--no-admin] [-- <extra st args>]
 *
 * Environment: CONFORMANCE_DATABASE_URL (default postgresql://postgres@127.0.0.1:5432/dialer_conformance;
 * dropped and re-created on every run).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, openSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ROOT_DIR } from '../../src/config';
import { dropDatabase } from '../../src/db/bootstrap';
import { prepareDatabase } from '../../src/db/migrate';
import { ensureTemporalBinary, freePort, readTemporalDevConfig, startTemporalDevServer } from '../../src/platform/temporal-dev';

export const SCHEMATHESIS_VERSION = '4.32.5';
const PHASES = 'examples,coverage,fuzzing,stateful';
/** Which statuses count as accepting schema-valid data (422 added; the reason is in the file). */
const CONFIG_FILE = path.join(ROOT_DIR, 'scripts', 'conformance', 'schemathesis.toml');

interface Options {
  durationSeconds: number;
  adminDurationSeconds: number;
  admin: boolean;
  extra: string[];
}

function parseArgs(argv: string[]): Options {
  const opts: Options = { durationSeconds: 300, adminDurationSeconds: 60, admin: true, extra: [] };
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i]!;
    const seconds = () => {
      const value = Number(argv[(i += 1)]);
      if (!Number.isInteger(value) || value < 1) throw new Error(`${arg} takes a whole number of seconds`);
      return value;
    };
    if (arg === '--duration') opts.durationSeconds = seconds();
    else if (arg === '--admin-duration') opts.adminDurationSeconds = seconds();
    else if (arg === '--no-admin') opts.admin = false;
    else if (arg === '--') {
      opts.extra = argv.slice(i + 1);
      break;
    } else throw new Error(`unknown argument ${arg}`);
  }
  return opts;
}

/** `st` from the project's tools folder, installed there from PyPI the first time (as the Temporal CLI is). */
export function ensureSchemathesis(toolsDir = path.join(ROOT_DIR, '.tools')): string {
  const venv = path.join(toolsDir, `schemathesis-${SCHEMATHESIS_VERSION}`);
  const binary = path.join(venv, 'bin', 'st');
  // Written last: a venv without it is a half-finished install and is redone.
  const marker = path.join(venv, '.installed');
  if (existsSync(marker)) return binary;
  rmSync(venv, { recursive: true, force: true });
  mkdirSync(toolsDir, { recursive: true });
  process.stdout.write(`installing schemathesis==${SCHEMATHESIS_VERSION} into ${venv}\n`);
  const run = (cmd: string, args: string[]) => {
    const result = spawnSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'ignore', 'pipe'] });
    if (result.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed: ${result.stderr}`);
  };
  run('python3', ['-m', 'venv', venv]);
  run(path.join(venv, 'bin', 'pip'), ['install', '--quiet', `schemathesis==${SCHEMATHESIS_VERSION}`]);
  writeFileSync(marker, `${new Date().toISOString()}\n`);
  return binary;
}

async function waitForHealth(base: string, product: ChildProcess): Promise<void> {
  const deadline = Date.now() + 180_000;
  while (Date.now() < deadline) {
    if (product.exitCode !== null) throw new Error(`the product exited with code ${product.exitCode} during start-up`);
    try {
      if ((await fetch(`${base}/healthz`)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 500));
  }
  throw new Error(`${base}/healthz did not answer 200 within 180 s`);
}

async function call<T>(base: string, method: string, route: string, token: string, body?: unknown): Promise<T> {
  const res = await fetch(`${base}${route}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${route} answered ${res.status}: ${text}`);
  return JSON.parse(text) as T;
}

/** A tenant with its first key, plus a few records so that reads and links have something to find. */
async function provision(base: string, adminToken: string): Promise<{ apiKey: string; spareKey: string }> {
  const created = await call<{ api_key: { token: string } }>(base, 'POST', '/v1/admin/tenants', adminToken, {
    name: `conformance-${randomBytes(4).toString('hex')}`,
    admin: { name: 'Conformance Admin', email: `conformance-${randomBytes(4).toString('hex')}@example.com` },
    tier: 'growth',
    seats: 10,
  });
  const apiKey = created.api_key.token;
  const spareKey = (await call<{ token: string }>(base, 'POST', '/v1/api_keys', apiKey, { label: 'conformance revocation pass' })).token;
  const seeds: [string, string, unknown][] = [['POST', '/v1/campaigns', { name: 'Conformance seed' }]];
  for (const [method, route, body] of seeds) {
    try {
      await call(base, method, route, apiKey, body);
    } catch (err) {
      // A seed is a convenience for the fuzzer, not part of what is measured.
      process.stdout.write(`seed skipped: ${(err as Error).message}\n`);
    }
  }
  return { apiKey, spareKey };
}

function runSt(st: string, args: string[]): Promise<number> {
  process.stdout.write(`\n$ st ${args.map((a) => (a.startsWith('Authorization') ? 'Authorization: Bearer <redacted>' : a)).join(' ')}\n`);
  return new Promise((resolve, reject) => {
    const child = spawn(st, args, { stdio: 'inherit', env: { ...process.env, SCHEMATHESIS_TELEMETRY: 'false' } });
    child.once('error', reject);
    child.once('exit', (code) => resolve(code ?? 1));
  });
}

async function main(): Promise<void> {
  const opts = parseArgs(process.argv.slice(2));
  const st = ensureSchemathesis();
  const reportDir = path.join(ROOT_DIR, '.data', 'conformance');
  mkdirSync(reportDir, { recursive: true });

  const databaseUrl = process.env.CONFORMANCE_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/dialer_conformance';
  await dropDatabase(databaseUrl);
  await prepareDatabase(databaseUrl);

  const devConfig = readTemporalDevConfig();
  const temporalBinary = ensureTemporalBinary(path.join(ROOT_DIR, '.tools'), devConfig.cli, (m) => process.stdout.write(`${m}\n`));
  const temporal = await startTemporalDevServer({ binary: temporalBinary, config: devConfig.server, port: await freePort(), dbFile: null, headless: true });

  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const adminToken = randomBytes(24).toString('hex');
  const dataDir = path.join(reportDir, 'data');
  rmSync(dataDir, { recursive: true, force: true });
  // The product logs to a file: its lines would interleave with Schemathesis's progress.
  const productLog = openSync(path.join(reportDir, 'product.log'), 'w');
  const product = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT_DIR, 'src', 'main.ts')], {
    cwd: ROOT_DIR,
    env: {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      METRICS_PORT: String(await freePort()),
      WORKER_METRICS_PORT: String(await freePort()),
      DATABASE_URL: databaseUrl,
      TEMPORAL_ADDRESS: temporal.address,
      ADMIN_API_TOKEN: adminToken,
      APP_ENCRYPTION_KEY: randomBytes(32).toString('hex'),
      DATA_DIR: dataDir,
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', productLog, productLog],
  });
  const stopAll = async () => {
    if (product.exitCode === null) {
      product.kill('SIGTERM');
      await new Promise((r) => product.once('exit', r));
    }
    await temporal.stop();
  };
  process.once('SIGINT', () => void stopAll().then(() => process.exit(130)));

  let exitCode = 0;
  try {
    await waitForHealth(base, product);
    const { apiKey, spareKey } = await provision(base, adminToken);
    const started = Date.now();
    const common = ['--checks', 'all', '--phases', PHASES, '--report', 'junit,ndjson', '--report-dir', reportDir, '--seed', String(Date.now() % 1_000_000)];
    // Revoking the key the run authenticates with would turn every later request into a 401, so the
    // revocation route gets a pass of its own, last, with a key of its own.
    const REVOKE = 'DELETE /v1/api_keys/{id}';
    // A websocket upgrade is no request OpenAPI can describe: any plain GET is answered 426 by design.
    const WEBSOCKET = 'GET /v1/ws';
    const passes: { name: string; token: string; seconds: number; filter: string[] }[] = [
      { name: 'tenant', token: apiKey, seconds: opts.durationSeconds, filter: ['--exclude-path-regex', '^/v1/admin/', '--exclude-name', REVOKE, '--exclude-name', WEBSOCKET] },
      { name: 'revoke', token: spareKey, seconds: 20, filter: ['--include-name', REVOKE] },
    ];
    if (opts.admin) passes.push({ name: 'admin', token: adminToken, seconds: opts.adminDurationSeconds, filter: ['--include-path-regex', '^/v1/admin/'] });
    for (const pass of passes) {
      const code = await runSt(st, [
        '--config-file',
        CONFIG_FILE,
        'run',
        `${base}/v1/openapi.json`,
        '-H',
        `Authorization: Bearer ${pass.token}`,
        ...pass.filter,
        '--max-time',
        String(pass.seconds),
        '--report-junit-path',
        path.join(reportDir, `${pass.name}.junit.xml`),
        '--report-ndjson-path',
        path.join(reportDir, `${pass.name}.ndjson`),
        ...common,
        ...opts.extra,
      ]);
      exitCode ||= code;
    }
    const cpu = os.cpus()[0]?.model ?? 'unknown cpu';
    process.stdout.write(
      `\nconformance: ${Math.round((Date.now() - started) / 1000)} s of Schemathesis ${SCHEMATHESIS_VERSION} on ${os.cpus().length} cores (${cpu}), ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}; reports in ${path.relative(ROOT_DIR, reportDir)}/\n`,
    );
  } finally {
    await stopAll();
  }
  process.exit(exitCode);
}

main().catch((err: unknown) => {
  process.stderr.write(`conformance run failed: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
