import { IANAZone } from 'luxon';
import { isE164 } from '../../lib/phone';
import { placeOfPostalCode, type NycBorough } from '../../lib/phone-geo';
import { DEBT_STATES, DEBT_TYPES, LINE_TYPES, MAX_CONTACTS_PER_DEBT } from './debt.schemas';

/**
 * Per-item validation of a debt import, by hand rather than with zod: an import is up to 10,000
 * items, each failure must name its field, and a bad item fails alone. Every field is tri-state:
 * omitted or empty string = leave the stored value unchanged, null = the item fails, a value =
 * set or correct it. Strings are trimmed.
 */

export interface ImportContact {
  phone_e164: string;
  line_type?: (typeof LINE_TYPES)[number];
  timezone?: string;
  us_state?: string;
  city?: string;
  postal_code?: string;
  consumer_ref?: string;
  /** Only meaningful with postal_code: the borough the postal code resolves to (null outside NYC). */
  nyc_borough?: NycBorough | null;
  /** Only meaningful with postal_code: the state the postal code lies in (null when it resolves to none). */
  postal_state?: string | null;
  /** YYYY-MM-DD: the day the consumer gave the creditor this number (the consent's real date). */
  consent_given_on?: string;
  is_primary: boolean;
}

export interface ImportDebt {
  external_ref: string;
  consumer_ref: string;
  debt_type?: (typeof DEBT_TYPES)[number];
  account_number?: string;
  amount_cents?: number;
  currency?: string;
  state?: (typeof DEBT_STATES)[number];
  campaign_id?: string;
  /** Capped at 7. */
  prior_attempts_7d?: number;
  /**
   * Right-party verification data, plaintext only between validation and encryption: write-only,
   * never echoed in an error, never logged.
   */
  dob?: string;
  ssn_last4?: string;
  pin?: string;
  contacts: ImportContact[];
}

export type ItemResult = { ok: true; item: ImportDebt } | { ok: false; error: string };

const ITEM_FIELDS = new Set([
  'external_ref',
  'consumer_ref',
  'debt_type',
  'account_number',
  'amount_cents',
  'currency',
  'state',
  'campaign_id',
  'prior_attempts_7d',
  'dob',
  'ssn_last4',
  'pin',
  'contacts',
]);
const CONTACT_FIELDS = new Set([
  'phone_e164',
  'line_type',
  'timezone',
  'us_state',
  'city',
  'postal_code',
  'consumer_ref',
  'is_primary',
  'consent_given_on',
]);

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
// PostgreSQL text cannot hold NUL; other C0 controls have no business in these fields either.
// eslint-disable-next-line no-control-regex
const CONTROL_RE = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/;
const MAX_PRIOR_ATTEMPTS = 7;

class ItemError extends Error {}

const fail = (message: string): never => {
  throw new ItemError(message);
};

const hasOwn = (o: object, key: string) => Object.prototype.hasOwnProperty.call(o, key);

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function rejectUnknown(obj: Record<string, unknown>, allowed: Set<string>, prefix: string): void {
  const unknown = Object.keys(obj).filter((k) => !allowed.has(k));
  if (unknown.length) {
    fail(`unknown field${unknown.length > 1 ? 's' : ''}: ${unknown.map((k) => `'${prefix}${k}'`).join(', ')}`);
  }
}

/** undefined when omitted or blank; the trimmed string otherwise. */
function optionalString(obj: Record<string, unknown>, key: string, name: string, max: number): string | undefined {
  if (!hasOwn(obj, key)) return undefined;
  const value = obj[key];
  if (value === null) fail(`field '${name}' must not be null (omit it to keep the stored value)`);
  if (typeof value !== 'string') return fail(`field '${name}': must be a string`);
  const trimmed = value.trim();
  if (trimmed === '') return undefined;
  if (trimmed.length > max) fail(`field '${name}': must be at most ${max} characters`);
  if (CONTROL_RE.test(trimmed)) fail(`field '${name}': must not contain control characters`);
  return trimmed;
}

function requiredString(obj: Record<string, unknown>, key: string, name: string, max: number): string {
  if (!hasOwn(obj, key) || obj[key] === undefined) fail(`field '${name}' is required`);
  if (obj[key] === null) fail(`field '${name}' must not be null`);
  const value = optionalString(obj, key, name, max);
  if (value === undefined) return fail(`field '${name}': must be a non-empty string`);
  return value;
}

function optionalEnum<T extends string>(obj: Record<string, unknown>, key: string, name: string, values: readonly T[]): T | undefined {
  const value = optionalString(obj, key, name, 64);
  if (value === undefined) return undefined;
  if (!(values as readonly string[]).includes(value)) fail(`field '${name}': must be one of ${values.join(', ')}`);
  return value as T;
}

/** Omitted or empty string: undefined. Otherwise a safe integer >= 0. */
function optionalCount(obj: Record<string, unknown>, key: string, name: string): number | undefined {
  if (!hasOwn(obj, key)) return undefined;
  const value = obj[key];
  if (value === null) fail(`field '${name}' must not be null (omit it to keep the stored value)`);
  if (value === '') return undefined;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    fail(`field '${name}': must be an integer >= 0`);
  }
  return value as number;
}

function optionalBoolean(obj: Record<string, unknown>, key: string, name: string): boolean | undefined {
  if (!hasOwn(obj, key)) return undefined;
  const value = obj[key];
  if (value === null) fail(`field '${name}' must not be null (omit it to keep the stored value)`);
  if (value === '') return undefined;
  if (typeof value !== 'boolean') fail(`field '${name}': must be a boolean`);
  return value as boolean;
}

const DATE_RE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** A YYYY-MM-DD that names a real calendar day. */
function isCalendarDate(value: string): boolean {
  const m = DATE_RE.exec(value);
  if (!m) return false;
  const d = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])));
  return d.getUTCFullYear() === Number(m[1]) && d.getUTCMonth() === Number(m[2]) - 1 && d.getUTCDate() === Number(m[3]);
}

/** Today's date in UTC, YYYY-MM-DD (compared as a string with other YYYY-MM-DD dates). */
const todayUtc = () => new Date().toISOString().slice(0, 10);

/** An optional YYYY-MM-DD date; `until` says how it relates to today. */
function optionalDate(obj: Record<string, unknown>, key: string, name: string, until: 'past' | 'not_future'): string | undefined {
  const value = optionalString(obj, key, name, 10);
  if (value === undefined) return undefined;
  if (!isCalendarDate(value)) fail(`field '${name}': must be a date YYYY-MM-DD`);
  const today = todayUtc();
  if (until === 'past' && value >= today) fail(`field '${name}': must be a date in the past`);
  if (until === 'not_future' && value > today) fail(`field '${name}': must not be in the future`);
  return value;
}

/**
 * A write-only secret of `digits` digits. The messages name the field and the rule only: the value
 * (or a piece of it) never reaches the per-item error.
 */
function optionalDigits(obj: Record<string, unknown>, key: string, min: number, max: number): string | undefined {
  const rule = min === max ? `exactly ${min} digits` : `${min} to ${max} digits`;
  if (!hasOwn(obj, key)) return undefined;
  const value = obj[key];
  if (value === null) fail(`field '${key}' must not be null (omit it to keep the stored value)`);
  if (typeof value !== 'string') return fail(`field '${key}': must be a string of ${rule}`);
  const trimmed = value.trim();
  if (trimmed === '') return undefined;
  if (trimmed.length < min || trimmed.length > max || !/^[0-9]+$/.test(trimmed)) fail(`field '${key}': must be ${rule}`);
  return trimmed;
}

const zoneCache = new Map<string, boolean>();

/** An IANA zone name (Area/Location, or a legacy name such as UTC) that the runtime knows. */
export function isIanaZone(name: string): boolean {
  let ok = zoneCache.get(name);
  if (ok === undefined) {
    // The shape check keeps out what Intl also accepts but is no zone name (offsets like +05:00).
    ok = /^[A-Za-z][A-Za-z0-9_+\-/]{0,63}$/.test(name) && IANAZone.isValidZone(name);
    if (zoneCache.size < 10_000) zoneCache.set(name, ok);
  }
  return ok;
}

const postalCache = new Map<string, ReturnType<typeof placeOfPostalCode>>();

function placeOf(postal: string) {
  let place = postalCache.get(postal);
  if (!place) {
    place = placeOfPostalCode(postal);
    if (postalCache.size < 50_000) postalCache.set(postal, place);
  }
  return place;
}

function validateContact(raw: unknown, at: string): ImportContact {
  if (raw === null) fail(`field '${at}' must not be null`);
  if (!isPlainObject(raw)) return fail(`field '${at}': must be an object`);
  rejectUnknown(raw, CONTACT_FIELDS, `${at}.`);
  const phone = requiredString(raw, 'phone_e164', `${at}.phone_e164`, 32);
  if (!isE164(phone)) fail(`field '${at}.phone_e164': must be a valid E.164 number such as +12125550123`);
  const contact: ImportContact = { phone_e164: phone, is_primary: false };
  const lineType = optionalEnum(raw, 'line_type', `${at}.line_type`, LINE_TYPES);
  if (lineType !== undefined) contact.line_type = lineType;
  const timezone = optionalString(raw, 'timezone', `${at}.timezone`, 64);
  if (timezone !== undefined) {
    if (!isIanaZone(timezone)) fail(`field '${at}.timezone': must be an IANA time zone such as America/New_York`);
    contact.timezone = timezone;
  }
  const usState = optionalString(raw, 'us_state', `${at}.us_state`, 64);
  if (usState !== undefined) {
    if (!/^[A-Za-z]{2}$/.test(usState)) fail(`field '${at}.us_state': must be a two-letter state code`);
    contact.us_state = usState.toUpperCase();
  }
  const city = optionalString(raw, 'city', `${at}.city`, 200);
  if (city !== undefined) contact.city = city;
  const postal = optionalString(raw, 'postal_code', `${at}.postal_code`, 20);
  if (postal !== undefined) {
    contact.postal_code = postal;
    const place = placeOf(postal);
    contact.nyc_borough = place.nycBorough;
    // Kept apart from us_state: a postal code in another state than the given us_state is a
    // jurisdiction of the consumer too.
    contact.postal_state = place.state;
    if (contact.us_state === undefined && place.state) contact.us_state = place.state;
  }
  const consumerRef = optionalString(raw, 'consumer_ref', `${at}.consumer_ref`, 200);
  if (consumerRef !== undefined) contact.consumer_ref = consumerRef;
  contact.is_primary = optionalBoolean(raw, 'is_primary', `${at}.is_primary`) ?? false;
  const givenOn = optionalDate(raw, 'consent_given_on', `${at}.consent_given_on`, 'not_future');
  if (givenOn !== undefined) contact.consent_given_on = givenOn;
  return contact;
}

function validate(raw: unknown): ImportDebt {
  if (!isPlainObject(raw)) return fail('item must be a JSON object');
  rejectUnknown(raw, ITEM_FIELDS, '');
  const item: ImportDebt = {
    external_ref: requiredString(raw, 'external_ref', 'external_ref', 200),
    consumer_ref: requiredString(raw, 'consumer_ref', 'consumer_ref', 200),
    contacts: [],
  };
  const debtType = optionalEnum(raw, 'debt_type', 'debt_type', DEBT_TYPES);
  if (debtType !== undefined) item.debt_type = debtType;
  const accountNumber = optionalString(raw, 'account_number', 'account_number', 200);
  if (accountNumber !== undefined) item.account_number = accountNumber;
  const amount = optionalCount(raw, 'amount_cents', 'amount_cents');
  if (amount !== undefined) item.amount_cents = amount;
  const currency = optionalString(raw, 'currency', 'currency', 3);
  if (currency !== undefined) {
    if (!/^[A-Z]{3}$/.test(currency)) fail(`field 'currency': must be a three-letter uppercase ISO 4217 code such as USD`);
    item.currency = currency;
  }
  const state = optionalEnum(raw, 'state', 'state', DEBT_STATES);
  if (state !== undefined) item.state = state;
  const campaignId = optionalString(raw, 'campaign_id', 'campaign_id', 36);
  if (campaignId !== undefined) {
    if (!UUID_RE.test(campaignId)) fail(`field 'campaign_id': must be a uuid`);
    item.campaign_id = campaignId.toLowerCase();
  }
  const prior = optionalCount(raw, 'prior_attempts_7d', 'prior_attempts_7d');
  if (prior !== undefined) item.prior_attempts_7d = Math.min(prior, MAX_PRIOR_ATTEMPTS);
  const dob = optionalDate(raw, 'dob', 'dob', 'past');
  if (dob !== undefined) item.dob = dob;
  const ssnLast4 = optionalDigits(raw, 'ssn_last4', 4, 4);
  if (ssnLast4 !== undefined) item.ssn_last4 = ssnLast4;
  const pin = optionalDigits(raw, 'pin', 4, 8);
  if (pin !== undefined) item.pin = pin;

  if (hasOwn(raw, 'contacts')) {
    const contacts = raw.contacts;
    if (contacts === null) fail(`field 'contacts' must not be null (omit it to keep the stored contacts)`);
    if (contacts !== '') {
      if (!Array.isArray(contacts)) fail(`field 'contacts': must be an array`);
      const list = contacts as unknown[];
      if (list.length > MAX_CONTACTS_PER_DEBT) fail(`field 'contacts': at most ${MAX_CONTACTS_PER_DEBT} contacts per debt`);
      const seen = new Map<string, number>();
      let primaryAt = -1;
      list.forEach((rawContact, i) => {
        const contact = validateContact(rawContact, `contacts[${i}]`);
        const first = seen.get(contact.phone_e164);
        if (first !== undefined) fail(`field 'contacts[${i}].phone_e164': duplicate of contacts[${first}] in this item`);
        seen.set(contact.phone_e164, i);
        if (contact.is_primary) {
          if (primaryAt >= 0) fail(`field 'contacts[${i}].is_primary': contacts[${primaryAt}] is already primary (at most one per item)`);
          primaryAt = i;
        }
        item.contacts.push(contact);
      });
    }
  }
  return item;
}

/** Validates one import item on its own (cross-item rules such as duplicate refs come later). */
export function validateImportItem(raw: unknown): ItemResult {
  try {
    return { ok: true, item: validate(raw) };
  } catch (err) {
    if (err instanceof ItemError) return { ok: false, error: err.message };
    throw err;
  }
}
