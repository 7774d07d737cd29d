import os from 'node:os';
import path from 'node:path';
import ipaddr from 'ipaddr.js';
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
  // The standalone worker's own scrape port (npm run worker); 0 picks a free one.
  WORKER_METRICS_PORT: port(9465),
  // host:port where the Temporal SDK's own Prometheus exporter serves temporal_* metrics; unset: off.
  TEMPORAL_SDK_METRICS_ADDRESS: optionalString,
  // How long SIGTERM lets HTTP requests and worker activities finish before they are cut.
  SHUTDOWN_GRACE_MS: z.preprocess(blankAsUnset, z.coerce.number().int().min(0).max(600_000).default(25_000)),
  HOST: z.string().default('0.0.0.0'),
  // npm start's processes: API processes share PORT (node cluster), workers poll the task queue
  // side by side; the dial loop's CPU then never queues an API request behind it.
  API_PROCESSES: z.preprocess(blankAsUnset, z.coerce.number().int().min(1).max(64).default(1)),
  WORKER_PROCESSES: z.preprocess(blankAsUnset, z.coerce.number().int().min(0).max(64).default(1)),
  // Where npm start looks for PostgreSQL when DATABASE_URL is unset, and where it runs an embedded
  // one (data under DATA_DIR) when nothing answers there.
  LOCAL_DATABASE_ADDRESS: z
    .string()
    .trim()
    .regex(/^[A-Za-z0-9.-]+:\d{1,5}$/, 'host:port')
    .default('127.0.0.1:5432'),
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
  // Silence on the switch link (no event, heartbeat or reply) after which it is taken as half-open
  // and reconnected; an `api status` probe goes out after a third of it.
  ESL_LIVENESS_TIMEOUT_MS: z.preprocess(blankAsUnset, z.coerce.number().int().min(100).max(600_000).default(15_000)),
  // The switch's text-to-speech for everything a call says (FreeSWITCH `speak <engine>|<voice>|<text>`):
  // the engine is a loaded TTS module's name (mod_flite: flite, mod_tts_commandline: tts_commandline).
  TTS_ENGINE: z.string().trim().regex(/^[A-Za-z0-9_.-]{1,64}$/, 'a TTS module name such as flite').default('flite'),
  TTS_VOICE: z.string().trim().regex(/^[A-Za-z0-9_.-]{1,64}$/, 'a voice name such as kal').default('kal'),
  PUBLIC_BASE_URL: optionalString,
  // Speech for live AI calls (docs/speech.md): the offline engines (PocketSphinx, eSpeak NG) installed
  // into TOOLS_DIR, or a hosted provider reached through the egress check with SPEECH_API_KEY.
  SPEECH_PROVIDER: z.preprocess(blankAsUnset, z.enum(['offline', 'deepgram', 'google']).default('offline')),
  SPEECH_API_KEY: optionalString,
  // The hosted provider's base URL when not its public one (a regional endpoint, a test server).
  SPEECH_BASE_URL: optionalString,
  // Silence after speech that ends an utterance: shorter answers sooner, longer cuts fewer pauses.
  SPEECH_EOU_SILENCE_MS: z.preprocess(blankAsUnset, z.coerce.number().int().min(100).max(5000).default(500)),
  // Speech that lasts this long while the AI is talking stops its turn (barge-in).
  SPEECH_BARGE_IN_MS: z.preprocess(blankAsUnset, z.coerce.number().int().min(20).max(2000).default(200)),
  SPEECH_TTS_WORDS_PER_MINUTE: z.preprocess(blankAsUnset, z.coerce.number().int().min(80).max(400).default(160)),
  // The AI's audio gateway (docs/ai-calls.md): a websocket server in the worker that takes the
  // consumer's leg from the switch's mod_audio_fork. Unset: this worker runs none.
  AI_AUDIO_WS_PORT: z.preprocess(blankAsUnset, z.coerce.number().int().min(0).max(65_535).optional()),
  // The gateway as the switch reaches it (ws:// or wss://; a balancer in front of the workers). Unset:
  // no fork is started, and the switch's own recognizer must report each utterance as dd::speech.
  AI_AUDIO_WS_URL: z.preprocess(blankAsUnset, z.string().regex(/^wss?:\/\/[^\s'"{}\\]+$/, 'a ws:// or wss:// URL').optional()),
  // Signs every call's fork URL (HMAC-SHA256 of the call); shared by every worker.
  AI_AUDIO_SECRET: z.preprocess(blankAsUnset, z.string().min(16, 'at least 16 characters').optional()),
  // How long the switch has to connect a call's fork before the AI gives the call to a person.
  AI_AUDIO_CONNECT_TIMEOUT_MS: z.preprocess(blankAsUnset, z.coerce.number().int().min(100).max(60_000).default(5000)),
  // A recognition below this confidence (0..1) is asked again, AI_ASR_REPROMPTS times in a row at most.
  AI_ASR_MIN_CONFIDENCE: z.preprocess(blankAsUnset, z.coerce.number().min(0).max(1).default(0.3)),
  AI_ASR_REPROMPTS: z.preprocess(blankAsUnset, z.coerce.number().int().min(0).max(5).default(2)),
  EGRESS_ALLOWLIST: z.string().default(''),
  SMTP_URL: optionalString,
  MAIL_FROM: z.string().default('no-reply@dialer.invalid'),
  APP_ENCRYPTION_KEY: optionalString,
  // Keys retired by a rotation that must still decrypt (comma-separated secrets, no commas inside one):
  // ciphertexts name their key by id, and `npm run ops -- keys rotate` re-encrypts under the current key.
  APP_ENCRYPTION_KEYS_PREVIOUS: optionalString,
  // SIP proxies and trunk source addresses exempt from the public-address rules (comma-separated IP
  // addresses, CIDR blocks or exact host names), for a carrier the operator reaches on a private network.
  SIP_EDGE_ALLOWLIST: z.string().default(''),
  // Reverse proxies whose X-Forwarded-For is believed (comma-separated IP addresses or CIDR blocks).
  // The client address (login and operator budgets) is the right-most X-Forwarded-For entry that is
  // not one of them, and only when the socket peer is one; unset: the socket peer is the client.
  TRUSTED_PROXIES: z.string().default(''),
  // PBKDF2 verifications per second across every API process (dashboard login, agent login, password
  // change), checked before the hash: unset means about 40 % of this host's cores at the configured cost.
  LOGIN_HASHES_PER_SECOND: z.preprocess(blankAsUnset, z.coerce.number().int().min(1).max(100_000).optional()),
  // How often the worker deletes expired rate_limits windows.
  RATE_LIMIT_PRUNE_INTERVAL_MS: z.preprocess(blankAsUnset, z.coerce.number().int().min(100).max(86_400_000).default(300_000)),
  LOG_LEVEL: z.string().default('info'),
  // A revocation written by another process must hold within a second (issue 20), so a second is the ceiling.
  CREDENTIAL_CACHE_TTL_MS: z.preprocess(blankAsUnset, z.coerce.number().int().min(0).max(1000).default(1000)),
  PASSWORD_PBKDF2_ITERATIONS: z.preprocess(blankAsUnset, z.coerce.number().int().min(1000).default(210_000)),
  // How often the billing pass evaluates every tenant with billing on (alerts, cap, prepaid funds, rollover).
  BILLING_ENFORCEMENT_INTERVAL_MS: z.preprocess(blankAsUnset, z.coerce.number().int().min(100).max(3_600_000).default(60_000)),
  // What one minute of an answered AI call costs (metered per call at the rate in force, issue 9).
  AI_MINUTE_RATE_USD: z.preprocess(blankAsUnset, z.coerce.number().min(0).max(100).default(0.12)),
  AI_MAX_CALL_SECONDS_DEFAULT: z.preprocess(blankAsUnset, z.coerce.number().int().positive().default(900)),
  // Live-call control toggles (hold, unhold, mute, unmute) per tenant and principal per minute; hangup is exempt.
  CALL_CONTROL_PER_MINUTE: z.preprocess(blankAsUnset, z.coerce.number().int().min(1).max(100_000).default(120)),
  // Widget tokens (ddw_): each token lives WIDGET_TOKEN_TTL_SECONDS and renew slides it forward, never
  // past the session cap counted from the mint (at most the 24 h session ceiling).
  WIDGET_TOKEN_TTL_SECONDS: z.preprocess(blankAsUnset, z.coerce.number().int().min(60).max(86_400).default(3600)),
  WIDGET_SESSION_CAP_SECONDS: z.preprocess(blankAsUnset, z.coerce.number().int().min(60).max(86_400).default(12 * 3600)),
  // Ephemeral SIP credential of the browser softphone, issued at check-in (SPEC Limits: 24 h autoexpiry).
  SIP_CREDENTIAL_TTL_SECONDS: z.preprocess(blankAsUnset, z.coerce.number().int().min(60).max(86_400).default(86_400)),
  // The SIP domain and websocket address the softphone registers with (null in the bootstrap when unset).
  SIP_DOMAIN: optionalString,
  SIP_WSS_URL: optionalString,
  // The switch's credential for the SIP directory (POST /switch/directory, mod_xml_curl's
  // gateway-credentials: HTTP basic auth, this token as the password). Unset: every directory request
  // is 401, except that `npm start` with the embedded simulator makes up one for it.
  SWITCH_DIRECTORY_TOKEN: z.preprocess(blankAsUnset, z.string().trim().min(16, 'at least 16 characters').max(256).regex(/^[^:\s]+$/, 'no colon or space (it travels in HTTP basic auth)').optional()),
  // The embedded simulator plays the browser: a browser seat's softphone registers at check-in
  // through the directory and unregisters at check-out (CONTRACT section 10). 0 turns it off.
  SIM_AUTO_REGISTER: z.preprocess(blankAsUnset, z.enum(['0', '1']).default('1')),
  // Supervision legs per tenant (listen, whisper, barge, takeover), a quota separate from max_concurrent_channels.
  MAX_SUPERVISION_CHANNELS: z.preprocess(blankAsUnset, z.coerce.number().int().min(0).max(10_000).default(10)),
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
  // The SIP edge (SBC) API that carriers and inbound routes are provisioned through. Unset: there is
  // no edge in this environment and provisioning only records intent (status sbc_disabled).
  SBC_API_URL: optionalString,
  SBC_API_TOKEN: optionalString,
  // Where the switch writes call recordings (uuid_record): a folder the switch and the workers share.
  // At call end a worker moves the file into the object store. Unset: <DATA_DIR>/switch-recordings.
  SWITCH_RECORDINGS_DIR: optionalString,
  // Where recordings and recording exports live: a local folder (served back through signed /files
  // URLs) or any S3-compatible bucket (presigned URLs). The S3 endpoint must pass the egress check.
  OBJECT_STORE: z.enum(['local', 's3']).default('local'),
  OBJECT_STORE_DIR: optionalString,
  OBJECT_STORE_MIN_FREE_BYTES: z.preprocess(blankAsUnset, z.coerce.number().int().min(0).default(0)),
  S3_BUCKET: optionalString,
  S3_REGION: z.string().default('us-east-1'),
  S3_ENDPOINT: optionalString,
  S3_FORCE_PATH_STYLE: z.preprocess(blankAsUnset, z.enum(['true', 'false']).default('false')),
  S3_ACCESS_KEY_ID: optionalString,
  S3_SECRET_ACCESS_KEY: optionalString,
  S3_SESSION_TOKEN: optionalString,
  S3_KEY_PREFIX: optionalString,
  // Recording exports (SPEC Limits): widest from..to range, the window an identical request gets the
  // finished job back, and when a generating export whose worker stopped heartbeating is released.
  RECORDING_EXPORT_MAX_RANGE_DAYS: z.preprocess(blankAsUnset, z.coerce.number().int().min(1).max(3660).default(366)),
  RECORDING_EXPORT_DEDUP_TTL_SECONDS: z.preprocess(blankAsUnset, z.coerce.number().int().min(0).max(86_400).default(900)),
  RECORDING_EXPORT_CLAIM_STALE_SECONDS: z.preprocess(blankAsUnset, z.coerce.number().int().min(10).max(86_400).default(900)),
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
  /** TRUSTED_PROXIES normalized to CIDR blocks (`10.0.0.0/8`, `::1/128`). */
  trustedProxies: string[];
  /** LOGIN_HASHES_PER_SECOND, or its default derived from the cores and PASSWORD_PBKDF2_ITERATIONS. */
  loginHashesPerSecond: number;
  /** APP_ENCRYPTION_KEYS_PREVIOUS, split: secrets that still decrypt but never encrypt. */
  encryptionKeysPrevious: string[];
  /** SIP_EDGE_ALLOWLIST normalized: CIDR blocks (`10.0.0.0/8`, `fd00::/8`) and lowercase host names. */
  sipEdgeAllowlist: string[];
}

export const DEFAULT_DATABASE_URL = 'postgresql://postgres@127.0.0.1:5432/dialer';

/** The owner-side URL of the local server at LOCAL_DATABASE_ADDRESS (the default DATABASE_URL). */
export function localDatabaseUrl(address: string): string {
  return `postgresql://postgres@${address}/dialer`;
}
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
  // A host generating its own key would encrypt what no other host (nor its own next container)
  // can read, and nobody would notice until a decrypt failed.
  if (e.NODE_ENV === 'production' && !e.APP_ENCRYPTION_KEY) {
    throw new Error('invalid environment: APP_ENCRYPTION_KEY must be set when NODE_ENV=production (the key that encrypts values at rest, shared by every host)');
  }
  if ((e.AI_AUDIO_WS_URL !== undefined || e.AI_AUDIO_WS_PORT !== undefined) && !e.AI_AUDIO_SECRET) {
    throw new Error('invalid environment: AI_AUDIO_WS_URL and AI_AUDIO_WS_PORT need AI_AUDIO_SECRET (signs the switch audio stream URLs)');
  }
  const ownerDatabaseUrl = e.DATABASE_URL ?? localDatabaseUrl(e.LOCAL_DATABASE_ADDRESS);
  return {
    ...e,
    ownerDatabaseUrl,
    appDatabaseUrl: e.APP_DATABASE_URL ?? deriveAppDatabaseUrl(ownerDatabaseUrl),
    publicBaseUrl: (e.PUBLIC_BASE_URL ?? `http://127.0.0.1:${e.PORT}`).replace(/\/+$/, ''),
    egressAllowlist: e.EGRESS_ALLOWLIST.split(',')
      .map((s) => s.trim())
      .filter(Boolean),
    trustedProxies: e.TRUSTED_PROXIES.split(',')
      .map((s) => s.trim())
      .filter(Boolean)
      .map(trustedProxyEntry),
    loginHashesPerSecond: e.LOGIN_HASHES_PER_SECOND ?? defaultLoginHashesPerSecond(e.PASSWORD_PBKDF2_ITERATIONS),
    encryptionKeysPrevious: previousKeysOf(e.APP_ENCRYPTION_KEY, e.APP_ENCRYPTION_KEYS_PREVIOUS),
    sipEdgeAllowlist: e.SIP_EDGE_ALLOWLIST.split(',')
      .map((s) => s.trim())
      .filter(Boolean)
      .map(sipEdgeAllowlistEntry),
  };
}

function previousKeysOf(current: string | undefined, raw: string | undefined): string[] {
  if (raw === undefined) return [];
  if (current === undefined) throw new Error('invalid environment: APP_ENCRYPTION_KEYS_PREVIOUS needs APP_ENCRYPTION_KEY (the current key)');
  const keys = raw.split(',').map((s) => s.trim());
  if (keys.some((k) => k === '')) throw new Error('invalid environment: APP_ENCRYPTION_KEYS_PREVIOUS: an empty entry (secrets are comma-separated)');
  if (keys.includes(current)) throw new Error('invalid environment: APP_ENCRYPTION_KEYS_PREVIOUS lists the current APP_ENCRYPTION_KEY');
  return [...new Set(keys)];
}

const HOST_NAME = /^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/;

/** One SIP_EDGE_ALLOWLIST entry: an address (as a /32 or /128 block), a CIDR block or a host name. */
function sipEdgeAllowlistEntry(raw: string): string {
  const text = raw.toLowerCase();
  try {
    const literal = (a: string) => ipaddr.IPv4.isValidFourPartDecimal(a) || ipaddr.IPv6.isValid(a);
    if (text.includes('/') && literal(text.split('/')[0]!)) {
      const [addr, bits] = ipaddr.parseCIDR(text);
      return `${addr.toString()}/${bits}`;
    }
    if (literal(text)) {
      const addr = ipaddr.parse(text);
      return `${addr.toString()}/${addr.kind() === 'ipv4' ? 32 : 128}`;
    }
  } catch {
    // falls through to the error below
  }
  if (!text.includes('/') && !/^[0-9.]+$/.test(text) && HOST_NAME.test(text.replace(/\.$/, ''))) return text.replace(/\.$/, '');
  throw new Error(`invalid environment: SIP_EDGE_ALLOWLIST: ${raw} is not an IP address, a CIDR block or a host name`);
}

/** One TRUSTED_PROXIES entry: an IP address (as a /32 or /128 block) or a CIDR block. */
function trustedProxyEntry(raw: string): string {
  try {
    if (raw.includes('/')) {
      const [addr, bits] = ipaddr.parseCIDR(raw);
      return `${addr.toString()}/${bits}`;
    }
    if (ipaddr.IPv4.isValidFourPartDecimal(raw) || ipaddr.IPv6.isValid(raw)) {
      const addr = ipaddr.parse(raw);
      return `${addr.toString()}/${addr.kind() === 'ipv4' ? 32 : 128}`;
    }
  } catch {
    // reported below
  }
  throw new Error(`invalid environment: TRUSTED_PROXIES: ${JSON.stringify(raw)} is not an IP address or CIDR block`);
}

/**
 * A core verifies about ten 210k-iteration PBKDF2-SHA512 hashes a second; the default keeps hashing
 * to about 40 % of the host's cores so a flood of guesses never queues a real login behind it.
 */
function defaultLoginHashesPerSecond(iterations: number): number {
  return Math.max(2, Math.round((os.cpus().length * 4 * 210_000) / iterations));
}
