import { canonicalJson } from '../../lib/canonical-json';
import { invalid } from '../../lib/errors';
import { isE164 } from '../../lib/phone';
import { isValidZone } from '../compliance/compliance.decide';

/**
 * The domain rules of a campaign's settings. Pure: no I/O, no clock. The routes check JSON types
 * (a wrong type or an unknown key is 400 bad_request); everything here is a rule on a well-typed
 * value and answers 400 `invalid`. The rules that need the database (caller_id_pool ids must be
 * DIDs of the tenant; caller_ids must not be another tenant's active DIDs) are checked by the
 * service on the normalized values this module returns.
 */

export const CAMPAIGN_TYPES = [
  'predictive',
  'progressive',
  'preview',
  'manual',
  'tts_blast',
  'tts_ivr',
  'ivr_cascade',
  'survey',
  'ai_voice',
  'sms_blast',
] as const;
export type CampaignType = (typeof CAMPAIGN_TYPES)[number];
export const CAMPAIGN_STATES = ['draft', 'running', 'paused', 'completed', 'archived', 'suspended_balance'] as const;
export type CampaignState = (typeof CAMPAIGN_STATES)[number];
export type Channel = 'voice' | 'sms';

export const channelOf = (type: CampaignType): Channel => (type === 'sms_blast' ? 'sms' : 'voice');

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Characters as PostgreSQL counts them (code points), not UTF-16 units. */
const charLength = (s: string): number => [...s].length;

// ---------------------------------------------------------------------------------------------
// Limits

export const NAME_MAX = 200;
export const TTS_PROMPT_MAX = 2000;
export const SMS_BODY_MAX = 1600;
/** A campaign's carrier: a carrier id (any case; stored lower case). */
const CARRIER_ID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const CALLER_IDS_MAX = 1000;
export const IVR_MAX_DEPTH = 5;
export const IVR_MAX_NODES = 64;
export const IVR_PROMPT_MAX = 2000;
export const CONSULT_MAX_ATTEMPTS = { min: 1, max: 10 } as const;
/** Fraction of answered calls that may be abandoned, scale 4 (column numeric(6,4)). */
export const ABANDONMENT_THRESHOLD = { min: 0, max: 1, scale: 4 } as const;
/** Lines dialed per available agent, scale 3 (columns numeric(6,3)). */
export const DIAL_RATIO = { min: 1, max: 100, scale: 3 } as const;

// ---------------------------------------------------------------------------------------------
// SMS body

export const MERGE_VARIABLES = ['debt_ref', 'consumer_ref', 'account_number', 'amount', 'state'] as const;

const KEYWORD = `["'\u201c\u201d\u2018\u2019]?(?:stop|alto)["'\u201c\u201d\u2018\u2019]?`;
const AFTER_KEYWORD = '(?![\\p{L}\\p{N}])';
const VERBS = [
  'reply', 'text', 'txt', 'send', 'respond', 'answer',
  'responde', 'responda', 'contesta', 'conteste', 'env[ií]a', 'env[ií]e', 'escribe', 'escriba', 'manda', 'mande',
].join('|');
const OPT_OUT_PURPOSES = [
  'opt[\\s-]?out', 'unsubscribe', 'end', 'cancel', 'quit', 'stop',
  'cancelar', 'salir', 'no recibir', 'dejar de recibir', 'darse de baja', 'darte de baja', 'darle de baja', 'ser dado de baja',
].join('|');

/**
 * The opt-out notice an SMS body must carry (CTIA; TCPA revocation of consent). Case-insensitive,
 * the keyword STOP or, in Spanish, ALTO (optionally quoted), in one of two forms:
 * - an instruction verb right before it, optionally with "with"/"con" or a colon: "Reply STOP",
 *   "Text STOP to 12345", "Reply with STOP", "Responde ALTO", "Envía ALTO";
 * - the keyword followed by to/para and an opt-out purpose: "STOP to opt out", "STOP to
 *   unsubscribe", "ALTO para cancelar", "ALTO para darse de baja".
 * A bare "stop" in running text ("stop by our office") is not a notice.
 */
const STOP_NOTICE_PATTERNS: readonly RegExp[] = [
  new RegExp(`(?<![\\p{L}\\p{N}])(?:${VERBS})(?:\\s+(?:with|con))?\\s*:?\\s+${KEYWORD}${AFTER_KEYWORD}`, 'iu'),
  new RegExp(`(?<![\\p{L}\\p{N}])${KEYWORD}\\s+(?:to|para)\\s+(?:${OPT_OUT_PURPOSES})${AFTER_KEYWORD}`, 'iu'),
];

export function hasStopNotice(body: string): boolean {
  return STOP_NOTICE_PATTERNS.some((re) => re.test(body));
}

const MERGE_TOKEN_RE = /\{\{([^{}]*)\}\}/g;

/** Why an SMS body is refused, or null. Merge variables are exactly `{{name}}`, no spaces. */
export function smsBodyProblem(body: string): string | null {
  if (body.trim() === '') return 'sms_body must not be empty';
  if (charLength(body) > SMS_BODY_MAX) return `sms_body must be at most ${SMS_BODY_MAX} characters`;
  for (const match of body.matchAll(MERGE_TOKEN_RE)) {
    const name = match[1] ?? '';
    if (!(MERGE_VARIABLES as readonly string[]).includes(name)) {
      return `sms_body uses an unknown merge variable {{${name}}}; allowed: ${MERGE_VARIABLES.map((v) => `{{${v}}}`).join(', ')}`;
    }
  }
  const rest = body.replace(MERGE_TOKEN_RE, '');
  if (rest.includes('{{') || rest.includes('}}')) return 'sms_body has a malformed merge variable (unbalanced {{ or }})';
  if (!hasStopNotice(body)) {
    return 'sms_body must contain the STOP opt-out notice, for example "Reply STOP to opt out" or "Responde ALTO para cancelar"';
  }
  return null;
}

// ---------------------------------------------------------------------------------------------
// Decimals and times

/**
 * A JSON number as the decimal string stored and rendered, or a problem: finite, inside
 * [min, max], at most `scale` decimal places (never rounded).
 */
export function decimalProblem(field: string, value: number, bounds: { min: number; max: number; scale: number }): string | null {
  if (!Number.isFinite(value)) return `${field} must be a finite number`;
  if (value < bounds.min || value > bounds.max) return `${field} must be between ${bounds.min} and ${bounds.max}`;
  const text = String(value);
  const [, fraction = ''] = text.split('.');
  if (/e/i.test(text) || fraction.length > bounds.scale) return `${field} must have at most ${bounds.scale} decimal places`;
  return null;
}

/** A JSON number as its decimal string (call after decimalProblem). */
export const decimalText = (value: number): string => String(value === 0 ? 0 : value);

export const TIME_OF_DAY_RE = /^(?:[01]\d|2[0-3]):[0-5]\d:[0-5]\d$/;

// ---------------------------------------------------------------------------------------------
// Opt-out digit, TTS prompt

export const DTMF_KEYS = ['0', '1', '2', '3', '4', '5', '6', '7', '8', '9', '*', '#'] as const;
const isDtmfKey = (key: string): boolean => (DTMF_KEYS as readonly string[]).includes(key);

/** Exactly one DTMF key; the empty string clears (null); anything else (any type) is a problem. */
export function parseOptoutDigit(value: unknown): { value: string | null } | { problem: string } {
  if (value === null || value === '') return { value: null };
  if (typeof value === 'string' && isDtmfKey(value)) return { value };
  return { problem: 'optout_digit must be exactly one DTMF key (0-9, *, #), or empty to clear' };
}

/** At most 2000 characters; empty or whitespace-only clears (null). */
export function parseTtsPrompt(value: string | null): { value: string | null } | { problem: string } {
  if (value === null || value.trim() === '') return { value: null };
  if (charLength(value) > TTS_PROMPT_MAX) return { problem: `tts_prompt must be at most ${TTS_PROMPT_MAX} characters` };
  return { value };
}

// ---------------------------------------------------------------------------------------------
// IVR menu

export const IVR_ACTIONS = ['transfer_agent', 'optout', 'hangup'] as const;

/**
 * The IVR menu tree. `{}` is no menu. Otherwise the top menu is either
 * - flat: `{"<key>": <entry>, ...}`, the keys single DTMF keys (the prompt is the campaign's
 *   tts_prompt), or
 * - nested: `{"prompt": "<text>", "entries": {"<key>": <entry>, ...}}`, nothing else.
 * An entry is exactly `{"action": "transfer_agent" | "optout" | "hangup"}` or exactly
 * `{"submenu": <nested menu>}` (a submenu always has its own prompt). A prompt is a non-blank
 * string of at most 2000 characters; a menu maps at least one key.
 *
 * Depth: the top menu is depth 1, each submenu one more; at most 5. Nodes: every menu (the top one
 * and each submenu) and every action is one node; at most 64 (so a tree has at most 63 entries).
 */
export function ivrMenuProblem(menu: unknown): string | null {
  if (!isPlainObject(menu)) return 'ivr_menu must be an object';
  if (Object.keys(menu).length === 0) return null;
  return menuProblem(menu, 1, 'ivr_menu', { nodes: 0 }, true);
}

function menuProblem(menu: Record<string, unknown>, depth: number, path: string, count: { nodes: number }, top: boolean): string | null {
  if (depth > IVR_MAX_DEPTH) return `ivr_menu nests deeper than ${IVR_MAX_DEPTH} levels (at ${path})`;
  if (++count.nodes > IVR_MAX_NODES) return `ivr_menu has more than ${IVR_MAX_NODES} nodes`;

  let entries: unknown = menu;
  let entriesPath = path;
  if ('prompt' in menu || 'entries' in menu || !top) {
    const extra = Object.keys(menu).find((k) => k !== 'prompt' && k !== 'entries');
    if (extra !== undefined) return `${path}: unknown key '${extra}' (a nested menu has exactly prompt and entries)`;
    const prompt = menu.prompt;
    if (typeof prompt !== 'string' || prompt.trim() === '') return `${path}.prompt must be a non-empty string`;
    if (charLength(prompt) > IVR_PROMPT_MAX) return `${path}.prompt must be at most ${IVR_PROMPT_MAX} characters`;
    entries = menu.entries;
    entriesPath = `${path}.entries`;
    if (!isPlainObject(entries)) return `${entriesPath} must be an object mapping DTMF keys to entries`;
  }
  const map = entries as Record<string, unknown>;
  const keys = Object.keys(map);
  if (keys.length === 0) return `${entriesPath} must map at least one key`;
  for (const key of keys) {
    if (!isDtmfKey(key)) return `${entriesPath}: '${key}' is not a single DTMF key (0-9, *, #)`;
    const entry = map[key];
    const at = `${entriesPath}.${key}`;
    if (!isPlainObject(entry)) return `${at} must be {"action": ...} or {"submenu": ...}`;
    const entryKeys = Object.keys(entry);
    if (entryKeys.length !== 1 || (entryKeys[0] !== 'action' && entryKeys[0] !== 'submenu')) {
      return `${at} must have exactly one of action or submenu (got ${entryKeys.length ? entryKeys.map((k) => `'${k}'`).join(', ') : 'nothing'})`;
    }
    if ('action' in entry) {
      if (typeof entry.action !== 'string' || !(IVR_ACTIONS as readonly string[]).includes(entry.action)) {
        return `${at}.action must be one of ${IVR_ACTIONS.join(', ')}`;
      }
      if (++count.nodes > IVR_MAX_NODES) return `ivr_menu has more than ${IVR_MAX_NODES} nodes`;
    } else {
      const submenu = entry.submenu;
      if (!isPlainObject(submenu)) return `${at}.submenu must be an object with prompt and entries`;
      const problem = menuProblem(submenu, depth + 1, `${at}.submenu`, count, false);
      if (problem) return problem;
    }
  }
  return null;
}

// ---------------------------------------------------------------------------------------------
// Consult config

export const CONSULT_FACTORS = ['account_last4', 'ssn_last4', 'dob', 'pin', 'zip'] as const;
export const CONSULT_EXPOSE = ['balance', 'account_status', 'minimum_payment', 'due_date', 'last4_account'] as const;
export const DOB_FORMATS = ['mmdd', 'mmddyyyy'] as const;
const CONSULT_KEYS = ['factor', 'max_attempts', 'expose', 'factor_opts'];
const FACTOR_OPTS_KEYS = ['length', 'dob_format'];

/**
 * The consult (self-service account lookup) configuration, a closed schema. `{}` disables it.
 * Otherwise `factor` is required; `max_attempts` an integer 1..10; `expose` a list of distinct
 * values; `factor_opts` an object with `length` (positive integer) and/or `dob_format`. Any other
 * key, at either level, and null for any key, is a problem.
 */
export function consultConfigProblem(config: unknown): string | null {
  if (!isPlainObject(config)) return 'consult_config must be an object';
  const keys = Object.keys(config);
  if (keys.length === 0) return null;
  const unknown = keys.find((k) => !CONSULT_KEYS.includes(k));
  if (unknown !== undefined) return `consult_config: unknown key '${unknown}' (allowed: ${CONSULT_KEYS.join(', ')})`;
  if (!('factor' in config)) return 'consult_config.factor is required (send {} to disable consult)';
  if (typeof config.factor !== 'string' || !(CONSULT_FACTORS as readonly string[]).includes(config.factor)) {
    return `consult_config.factor must be one of ${CONSULT_FACTORS.join(', ')}`;
  }
  if ('max_attempts' in config) {
    const n = config.max_attempts;
    if (typeof n !== 'number' || !Number.isInteger(n) || n < CONSULT_MAX_ATTEMPTS.min || n > CONSULT_MAX_ATTEMPTS.max) {
      return `consult_config.max_attempts must be an integer from ${CONSULT_MAX_ATTEMPTS.min} to ${CONSULT_MAX_ATTEMPTS.max}`;
    }
  }
  if ('expose' in config) {
    const expose = config.expose;
    if (!Array.isArray(expose)) return `consult_config.expose must be an array of ${CONSULT_EXPOSE.join(', ')}`;
    const seen = new Set<string>();
    for (const item of expose) {
      if (typeof item !== 'string' || !(CONSULT_EXPOSE as readonly string[]).includes(item)) {
        return `consult_config.expose may hold only ${CONSULT_EXPOSE.join(', ')}`;
      }
      if (seen.has(item)) return `consult_config.expose lists '${item}' twice`;
      seen.add(item);
    }
  }
  if ('factor_opts' in config) {
    const opts = config.factor_opts;
    if (!isPlainObject(opts)) return 'consult_config.factor_opts must be an object';
    const extra = Object.keys(opts).find((k) => !FACTOR_OPTS_KEYS.includes(k));
    if (extra !== undefined) return `consult_config.factor_opts: unknown key '${extra}' (allowed: ${FACTOR_OPTS_KEYS.join(', ')})`;
    if ('length' in opts) {
      const n = opts.length;
      if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 1) return 'consult_config.factor_opts.length must be a positive integer';
    }
    if ('dob_format' in opts && (typeof opts.dob_format !== 'string' || !(DOB_FORMATS as readonly string[]).includes(opts.dob_format))) {
      return `consult_config.factor_opts.dob_format must be one of ${DOB_FORMATS.join(', ')}`;
    }
  }
  return null;
}

// ---------------------------------------------------------------------------------------------
// The whole write

/** A campaign's writable settings in their rendered form (decimals as strings, times HH:MM:SS). */
export interface CampaignSettings {
  name: string;
  campaign_type: CampaignType;
  sms_body: string | null;
  abandonment_threshold: string | null;
  min_dial_ratio: string | null;
  max_dial_ratio: string | null;
  calling_window_start: string | null;
  calling_window_end: string | null;
  default_timezone: string | null;
  calling_window_destination_local: boolean;
  record_calls: boolean;
  ai_voice: boolean;
  amd_enabled: boolean | null;
  optout_digit: string | null;
  tts_prompt: string | null;
  ivr_menu: Record<string, unknown>;
  deferred_bridge: boolean;
  consult_config: Record<string, unknown>;
  carrier: string | null;
  caller_ids: string[];
  caller_id_pool: string[];
  ai_agent_id: string | null;
}

/** A create or patch body as the route's schema typed it (every key optional here). */
export interface CampaignWrite {
  name?: string;
  campaign_type?: string;
  sms_body?: string | null;
  abandonment_threshold?: number | null;
  min_dial_ratio?: number | null;
  max_dial_ratio?: number | null;
  calling_window_start?: string | null;
  calling_window_end?: string | null;
  default_timezone?: string | null;
  calling_window_destination_local?: boolean;
  record_calls?: boolean;
  ai_voice?: boolean;
  amd_enabled?: boolean | null;
  optout_digit?: unknown;
  tts_prompt?: string | null;
  ivr_menu?: Record<string, unknown>;
  deferred_bridge?: boolean;
  consult_config?: Record<string, unknown>;
  carrier?: string | null;
  caller_ids?: string[];
  caller_id_pool?: string[];
  ai_agent_id?: string | null;
}

/** What a new campaign holds before its create body is applied. */
export const NEW_CAMPAIGN: CampaignSettings = {
  name: '',
  campaign_type: 'predictive',
  sms_body: null,
  abandonment_threshold: null,
  min_dial_ratio: null,
  max_dial_ratio: null,
  calling_window_start: null,
  calling_window_end: null,
  default_timezone: null,
  calling_window_destination_local: false,
  record_calls: false,
  ai_voice: false,
  amd_enabled: null,
  optout_digit: null,
  tts_prompt: null,
  ivr_menu: {},
  deferred_bridge: false,
  consult_config: {},
  carrier: null,
  caller_ids: [],
  caller_id_pool: [],
  ai_agent_id: null,
};

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const fail = (message: string): never => {
  throw invalid(message);
};

function check(problem: string | null): void {
  if (problem !== null) fail(problem);
}

function decimalField(field: string, value: number | null, bounds: { min: number; max: number; scale: number }): string | null {
  if (value === null) return null;
  check(decimalProblem(field, value, bounds));
  return decimalText(value);
}

function timeField(field: string, value: string | null): string | null {
  if (value === null) return null;
  if (!TIME_OF_DAY_RE.test(value)) fail(`${field} must be a time of day HH:MM:SS (00:00:00 to 23:59:59)`);
  return value;
}

function distinctList(field: string, values: string[], normalize: (v: string) => string | null, what: string): string[] {
  if (values.length > CALLER_IDS_MAX) fail(`${field} may hold at most ${CALLER_IDS_MAX} entries`);
  const out: string[] = [];
  for (const raw of values) {
    const value = normalize(raw);
    if (value === null) return fail(`${field}: '${raw}' is not ${what}`);
    if (out.includes(value)) fail(`${field} lists '${raw}' twice`);
    out.push(value);
  }
  return out;
}

/** Applies one field of a write to the settings, normalized; throws 400 invalid. */
function applyField(next: CampaignSettings, key: keyof CampaignWrite, write: CampaignWrite): void {
  switch (key) {
    case 'name': {
      const name = (write.name ?? '').trim();
      if (name === '') fail('name must not be empty');
      if (charLength(name) > NAME_MAX) fail(`name must be at most ${NAME_MAX} characters`);
      next.name = name;
      return;
    }
    case 'campaign_type': {
      const type = write.campaign_type ?? '';
      if (!(CAMPAIGN_TYPES as readonly string[]).includes(type)) fail(`campaign_type must be one of ${CAMPAIGN_TYPES.join(', ')}`);
      next.campaign_type = type as CampaignType;
      return;
    }
    case 'sms_body': {
      const body = write.sms_body ?? null;
      if (body !== null) check(smsBodyProblem(body));
      next.sms_body = body;
      return;
    }
    case 'abandonment_threshold':
      next.abandonment_threshold = decimalField(key, write.abandonment_threshold ?? null, ABANDONMENT_THRESHOLD);
      return;
    case 'min_dial_ratio':
      next.min_dial_ratio = decimalField(key, write.min_dial_ratio ?? null, DIAL_RATIO);
      return;
    case 'max_dial_ratio':
      next.max_dial_ratio = decimalField(key, write.max_dial_ratio ?? null, DIAL_RATIO);
      return;
    case 'calling_window_start':
      next.calling_window_start = timeField(key, write.calling_window_start ?? null);
      return;
    case 'calling_window_end':
      next.calling_window_end = timeField(key, write.calling_window_end ?? null);
      return;
    case 'default_timezone': {
      const zone = write.default_timezone ?? null;
      const valid: boolean = zone === null || isValidZone(zone);
      if (!valid) fail(`default_timezone '${zone ?? ''}' is not an IANA time zone`);
      next.default_timezone = zone;
      return;
    }
    case 'calling_window_destination_local':
    case 'record_calls':
    case 'ai_voice':
    case 'deferred_bridge':
      next[key] = write[key] === true;
      return;
    case 'amd_enabled':
      next.amd_enabled = write.amd_enabled ?? null;
      return;
    case 'optout_digit': {
      const parsed = parseOptoutDigit(write.optout_digit);
      if ('problem' in parsed) fail(parsed.problem);
      else next.optout_digit = parsed.value;
      return;
    }
    case 'tts_prompt': {
      const parsed = parseTtsPrompt(write.tts_prompt ?? null);
      if ('problem' in parsed) fail(parsed.problem);
      else next.tts_prompt = parsed.value;
      return;
    }
    case 'ivr_menu':
      check(ivrMenuProblem(write.ivr_menu));
      next.ivr_menu = write.ivr_menu ?? {};
      return;
    case 'consult_config':
      check(consultConfigProblem(write.consult_config));
      next.consult_config = write.consult_config ?? {};
      return;
    case 'carrier': {
      // The trunk is a carrier id; that it is one of the tenant's active carriers is checked against the registry (campaign.service).
      const carrier = write.carrier ?? null;
      if (carrier !== null && !CARRIER_ID_RE.test(carrier.trim())) {
        fail("carrier must be the id of one of the tenant's active carriers (its own or its account's), or null for the deployment default");
      }
      next.carrier = carrier === null ? null : carrier.trim().toLowerCase();
      return;
    }
    case 'caller_ids':
      next.caller_ids = distinctList(key, write.caller_ids ?? [], (v) => (isE164(v) ? v : null), 'an E.164 number');
      return;
    case 'caller_id_pool':
      next.caller_id_pool = distinctList(key, write.caller_id_pool ?? [], (v) => (UUID_RE.test(v) ? v.toLowerCase() : null), 'a DID id');
      return;
    case 'ai_agent_id': {
      const agentId = write.ai_agent_id ?? null;
      if (agentId !== null && !UUID_RE.test(agentId)) fail(`ai_agent_id '${agentId}' is not an AI agent id`);
      next.ai_agent_id = agentId === null ? null : agentId.toLowerCase();
      return;
    }
  }
}

const WRITE_KEYS: readonly (keyof CampaignWrite & keyof CampaignSettings)[] = Object.keys(NEW_CAMPAIGN) as (keyof CampaignSettings)[];

const sameValue = (a: unknown, b: unknown): boolean => canonicalJson(a) === canonicalJson(b);

/**
 * Applies a create or patch body to the current settings: absent keys keep their value, each sent
 * key is checked and normalized, then the rules between fields are checked on the result. Throws
 * 400 invalid naming the field. `changed` lists the keys whose stored value changes.
 */
export function applyCampaignWrite(current: CampaignSettings, write: CampaignWrite): { next: CampaignSettings; changed: (keyof CampaignSettings)[] } {
  const next: CampaignSettings = { ...current };
  for (const key of WRITE_KEYS) {
    if (write[key] !== undefined) applyField(next, key, write);
  }

  if (next.campaign_type === 'sms_blast' && next.sms_body === null) fail('sms_body is required for an sms_blast campaign');
  if ((next.calling_window_start === null) !== (next.calling_window_end === null)) {
    fail('calling_window_start and calling_window_end are set together (both or neither)');
  }
  if (next.calling_window_start !== null && next.calling_window_end !== null && next.calling_window_start >= next.calling_window_end) {
    fail('calling_window_start must be before calling_window_end');
  }
  if (next.min_dial_ratio !== null && next.max_dial_ratio !== null && Number(next.min_dial_ratio) > Number(next.max_dial_ratio)) {
    fail('min_dial_ratio must not exceed max_dial_ratio');
  }

  const changed = WRITE_KEYS.filter((key) => !sameValue(current[key], next[key]));
  return { next, changed };
}
