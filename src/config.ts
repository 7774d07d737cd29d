import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';

export const SERVICE_NAME = 'dialer-control-plane';
export const SERVICE_VERSION = '0.36.0';
export const ROOT_DIR = path.resolve(__dirname, '..');

const optionalString = z
  .string()
  .optional()
  .transform((v) => (v === undefined || v.trim() === '' ? undefined : v.trim()));
// A variable set to an empty string means "not set", so the default applies.
const blankAsUnset = (v: unknown) => (typeof v === 'string' && v.trim() === '' ? undefined : v);
const port = (fallback: number) => z.preprocess(blankAsUnset, z.coerce.number().int().min(0).max(65535).default(fallback));

const EnvSchema = z.object({
  NODE_ENV: z.string().default('development'),
  PORT: port(8080),
  METRICS_PORT: port(9464),
  HOST: z.string().default('0.0.0.0'),
  DATABASE_URL: optionalString,
  APP_DATABASE_URL: optionalString,
  // A few connections per core: more backends only queue on CPU and locks (on two cores a pool of
  // 20 cost GET /v1/me 10 % and multiplied the compliance engine's p99 twentyfold; see README).
  DB_POOL_MAX: z.preprocess(blankAsUnset, z.coerce.number().int().min(1).max(200).default(Math.min(32, Math.max(4, 4 * os.cpus().length)))),
  ADMIN_API_TOKEN: optionalString,
  TEMPORAL_ADDRESS: optionalString,
  TEMPORAL_NAMESPACE: z.string().default('default'),
  TEMPORAL_TASK_QUEUE: z.string().default('dialer'),
  // A prebuilt workflow bundle (bundleWorkflowCode output): a worker then starts in a second
  // instead of bundling the workflow code itself.
  WORKFLOW_BUNDLE_PATH: optionalString,
  ESL_HOST: optionalString,
  ESL_PORT: z.preprocess(blankAsUnset, z.coerce.number().int().min(1).max(65535).optional()),
  ESL_PASSWORD: optionalString,
  PUBLIC_BASE_URL: optionalString,
  EGRESS_ALLOWLIST: z.string().default(''),
  SMTP_URL: optionalString,
  MAIL_FROM: z.string().default('no-reply@dialer.invalid'),
  APP_ENCRYPTION_KEY: optionalString,
  LOG_LEVEL: z.string().default('info'),
  PASSWORD_PBKDF2_ITERATIONS: z.preprocess(blankAsUnset, z.coerce.number().int().min(1000).default(210_000)),
  AI_MAX_CALL_SECONDS_DEFAULT: z.preprocess(blankAsUnset, z.coerce.number().int().positive().default(900)),
  // Live-call control toggles (hold, unhold, mute, unmute) per tenant and principal per minute; hangup is exempt.
  CALL_CONTROL_PER_MINUTE: z.preprocess(blankAsUnset, z.coerce.number().int().min(1).max(100_000).default(120)),
  CALLBACK_MISS_AFTER_MS: z.preprocess(blankAsUnset, z.coerce.number().int().min(0).default(30 * 60_000)),
  // Websocket live floor. The ticket only bridges the REST call and the socket's opening, so it is short.
  WS_TICKET_TTL_SECONDS: z.preprocess(blankAsUnset, z.coerce.number().int().min(1).max(3600).default(60)),
  WS_HEARTBEAT_MS: z.preprocess(blankAsUnset, z.coerce.number().int().min(10).default(30_000)),
  WS_STATS_INTERVAL_MS: z.preprocess(blankAsUnset, z.coerce.number().int().min(10).default(2000)),
  WS_MAX_PER_TENANT: z.preprocess(blankAsUnset, z.coerce.number().int().min(1).default(50)),
  WS_MAX_PER_WIDGET_TOKEN: z.preprocess(blankAsUnset, z.coerce.number().int().min(1).default(3)),
  // How long a rotated-out webhook signing secret keeps signing alongside the new one (SPEC Limits).
  WEBHOOK_ROTATION_WINDOW_HOURS: z.preprocess(blankAsUnset, z.coerce.number().int().min(0).max(720).default(24)),
  // Multiplies every delay of the webhook retry ladder (tests run the whole ladder in seconds with 0.00001).
  WEBHOOK_RETRY_SCALE: z.preprocess(blankAsUnset, z.coerce.number().positive().max(1000).default(1)),
  // What one SMS segment costs the tenant: the ledger charges segments × this at provider accept and
  // keeps the figure on the row, so a later price change never rewrites past spend.
  SMS_PRICE_PER_SEGMENT_USD: z.preprocess(blankAsUnset, z.coerce.number().min(0).max(100).default(0.0079)),
  // The deployment's SMS provider: what a send uses when neither the tenant nor its account has an
  // active provider of its own. Unset means there is none, and such a send is 422 sms_provider_unconfigured.
  SMS_PROVIDER_ADAPTER: z.preprocess(blankAsUnset, z.enum(['mock', 'http', 'carrier_a']).optional()),
  SMS_PROVIDER_BASE_URL: optionalString,
  SMS_PROVIDER_API_KEY: optionalString,
  SMS_PROVIDER_REGION: z.preprocess(blankAsUnset, z.enum(['us', 'mx', 'eu']).default('us')),
  DATA_DIR: z.string().default(path.join(ROOT_DIR, '.data')),
  TOOLS_DIR: z.string().default(path.join(ROOT_DIR, '.tools')),
});

export type Env = z.infer<typeof EnvSchema>;

export interface Config extends Env {
  /** Connection used for bootstrap and migrations (the owner side). */
  ownerDatabaseUrl: string;
  /** Connection used by the API and workers: the non-owner dialer_app role. */
  appDatabaseUrl: string;
  publicBaseUrl: string;
  egressAllowlist: string[];
}

export const DEFAULT_DATABASE_URL = 'postgresql://postgres@127.0.0.1:5432/dialer';
export const APP_ROLE = 'dialer_app';
export const OWNER_ROLE = 'dialer_owner';

/** The app connects as dialer_app unless APP_DATABASE_URL names credentials explicitly. */
export function deriveAppDatabaseUrl(ownerUrl: string): string {
  const url = new URL(ownerUrl);
  url.username = APP_ROLE;
  url.password = '';
  return url.toString();
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = EnvSchema.safeParse(env);
  if (!parsed.success) {
    const detail = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    throw new Error(`invalid environment: ${detail}`);
  }
  const e = parsed.data;
  const ownerDatabaseUrl = e.DATABASE_URL ?? DEFAULT_DATABASE_URL;
  return {
    ...e,
    ownerDatabaseUrl,
    appDatabaseUrl: e.APP_DATABASE_URL ?? deriveAppDatabaseUrl(ownerDatabaseUrl),
    publicBaseUrl: (e.PUBLIC_BASE_URL ?? `http://127.0.0.1:${e.PORT}`).replace(/\/+$/, ''),
    egressAllowlist: e.EGRESS_ALLOWLIST.split(',')
      .map((s) => s.trim())
      .filter(Boolean),
  };
}
