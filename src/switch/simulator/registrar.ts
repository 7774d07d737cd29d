import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { Clock, ClockTimer } from './clock';

/**
 * The simulator's SIP registrar, fed only through the product's switch directory as FreeSWITCH's
 * mod_xml_curl `directory` binding is: a simulated softphone's REGISTER is challenged (RFC 2617
 * digest, MD5 as SIP digest authentication requires), the switch fetches the user from the
 * directory URL with its gateway credentials, checks the digest response against the served
 * password, and only then stores the registration under the REGISTER's address-of-record
 * (`<extension>@<domain>`). A registration not refreshed within its expiry ends with sofia::expire.
 */

export interface DirectoryClient {
  /** mod_xml_curl `gateway-url`. */
  url: string;
  /** mod_xml_curl `gateway-credentials`: `user:password` sent as HTTP basic auth. */
  credentials?: string;
}

export interface RegisterRequest {
  /** The address-of-record user: the seat's extension. */
  extension: string;
  /** The realm and address-of-record host. */
  domain: string;
  /** The digest user name: the ephemeral credential's username. */
  username: string;
  /** What the softphone knows; it never reaches the switch, only the digest response does. */
  password: string;
  expiresSec: number;
}

interface Registration {
  extension: string;
  domain: string;
  username: string;
  callId: string;
  expiresSec: number;
  timer: ClockTimer;
}

export interface RegistrarOptions {
  clock: Clock;
  hostname: string;
  profile: string;
  /** Fires a CUSTOM event of this subclass with these headers (the core adds the common ones). */
  fire: (subclass: string, headers: Array<[string, string]>) => void;
}

const EXTENSION_RE = /^[A-Za-z0-9._-]{1,64}$/;
const DOMAIN_RE = /^[A-Za-z0-9.-]{1,253}$/;
const USERNAME_RE = /^[A-Za-z0-9._-]{1,128}$/;

const md5 = (s: string): string => createHash('md5').update(s, 'utf8').digest('hex');

/** RFC 2617 digest response without qop: MD5(HA1:nonce:HA2), HA1 = MD5(user:realm:password), HA2 = MD5(method:uri). */
export function digestResponse(p: { username: string; realm: string; password: string; method: string; uri: string; nonce: string }): string {
  return md5(`${md5(`${p.username}:${p.realm}:${p.password}`)}:${p.nonce}:${md5(`${p.method}:${p.uri}`)}`);
}

const unescapeXml = (v: string): string =>
  v.replace(/&quot;/g, '"').replace(/&apos;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');

/**
 * The password of `username` in a directory document, or null when the document is FreeSWITCH's
 * "not found" result or has no such user (matched by id, as sofia's digest check does).
 */
export function passwordFromDirectory(xml: string, username: string): string | null {
  if (!/<document[^>]*type="freeswitch\/xml"/.test(xml) || !/<section[^>]*name="directory"/.test(xml)) return null;
  for (const m of xml.matchAll(/<user\b([^>]*)>([\s\S]*?)<\/user>/g)) {
    const id = /\bid="([^"]*)"/.exec(m[1]!)?.[1];
    if (id === undefined || unescapeXml(id) !== username) continue;
    const param = /<param\s+name="password"\s+value="([^"]*)"\s*\/>/.exec(m[2]!);
    return param ? unescapeXml(param[1]!) : null;
  }
  return null;
}

export class Registrar {
  private readonly table = new Map<string, Registration>();
  private directory: DirectoryClient | null = null;

  constructor(private readonly opts: RegistrarOptions) {}

  useDirectory(directory: DirectoryClient | null): void {
    this.directory = directory;
  }

  /** The mod_xml_curl binding the switch fetches its XML from (the gateway table uses it too). */
  binding(): DirectoryClient | null {
    return this.directory;
  }

  /** `<extension>@<domain>` of every registration, sorted. */
  list(): string[] {
    return [...this.table.keys()].sort();
  }

  /**
   * `user/<extension>` matches the extension on any domain; `user/<extension>@<domain>` only there.
   */
  isRegistered(extension: string, domain?: string): boolean {
    if (domain !== undefined) return this.table.has(`${extension}@${domain}`);
    for (const r of this.table.values()) if (r.extension === extension) return true;
    return false;
  }

  /**
   * A softphone's REGISTER: the challenge, the directory fetch, the digest check, then the
   * registration (a new one, or a refresh of the same address-of-record that restarts its expiry).
   * Answers `+OK registered <aor>` or `-ERR <why>` as the softphone would see it.
   */
  async register(req: RegisterRequest): Promise<string> {
    if (!EXTENSION_RE.test(req.extension) || !DOMAIN_RE.test(req.domain) || !USERNAME_RE.test(req.username)) return '-ERR invalid registration\n';
    if (!Number.isInteger(req.expiresSec) || req.expiresSec < 1) return '-ERR invalid expires\n';
    const directory = this.directory;
    if (!directory) return '-ERR 503 no directory configured (directoryUrl)\n';
    const nonce = randomBytes(16).toString('hex');
    const uri = `sip:${req.domain}`;
    // The softphone's half: it answers the challenge with what it knows.
    const response = digestResponse({ username: req.username, realm: req.domain, password: req.password, method: 'REGISTER', uri, nonce });
    // The switch's half: the directory tells it the password it expects.
    let served: string | null;
    try {
      served = await this.fetchPassword(directory, req, { nonce, uri, response });
    } catch {
      return '-ERR 503 directory unavailable\n';
    }
    const expected = served === null ? null : digestResponse({ username: req.username, realm: req.domain, password: served, method: 'REGISTER', uri, nonce });
    if (expected === null || expected !== response) return '-ERR 403 Forbidden\n';
    const aor = `${req.extension}@${req.domain}`;
    const existing = this.table.get(aor);
    if (existing) this.opts.clock.clearTimeout(existing.timer);
    const reg: Registration = {
      extension: req.extension,
      domain: req.domain,
      username: req.username,
      callId: existing?.username === req.username ? existing.callId : `${randomUUID()}@${this.opts.hostname}`,
      expiresSec: req.expiresSec,
      timer: this.opts.clock.setTimeout(() => this.expire(aor), req.expiresSec * 1000),
    };
    this.table.set(aor, reg);
    this.opts.fire('sofia::register', [
      ...this.common(reg),
      ['to-user', reg.extension],
      ['to-host', reg.domain],
      ['username', reg.username],
      ['realm', reg.domain],
      ['status', 'Registered(UDP)'],
      ['expires', String(reg.expiresSec)],
      ['network-ip', '127.0.0.1'],
      ['network-port', '5060'],
    ]);
    return `+OK registered ${aor}\n`;
  }

  /** The softphone's REGISTER with Expires: 0. */
  unregister(extension: string, domain?: string): number {
    return this.drop((r) => r.extension === extension && (domain === undefined || r.domain === domain));
  }

  /** flush_inbound_reg: a bare user on every host, `user@host` on that host, nothing given: all. */
  flush(user?: string, host?: string): number {
    return this.drop((r) => user === undefined || (r.extension === user && (host === undefined || r.domain === host)));
  }

  reset(): void {
    for (const r of this.table.values()) this.opts.clock.clearTimeout(r.timer);
    this.table.clear();
  }

  private drop(matches: (r: Registration) => boolean): number {
    let n = 0;
    for (const [aor, r] of [...this.table]) {
      if (!matches(r)) continue;
      this.opts.clock.clearTimeout(r.timer);
      this.table.delete(aor);
      this.opts.fire('sofia::unregister', [...this.common(r), ['expires', '0']]);
      n += 1;
    }
    return n;
  }

  private expire(aor: string): void {
    const r = this.table.get(aor);
    if (!r) return;
    this.table.delete(aor);
    this.opts.fire('sofia::expire', [...this.common(r), ['user', r.extension], ['host', r.domain], ['expires', String(r.expiresSec)]]);
  }

  private common(r: Registration): Array<[string, string]> {
    return [
      ['profile-name', this.opts.profile],
      ['from-user', r.extension],
      ['from-host', r.domain],
      ['contact', `"${r.extension}" <sip:${r.extension}@127.0.0.1:5060>`],
      ['call-id', r.callId],
      ['user-agent', 'dialer-switch-simulator softphone'],
    ];
  }

  /** mod_xml_curl's POST of a REGISTER's digest check (action sip_auth). */
  private async fetchPassword(directory: DirectoryClient, req: RegisterRequest, digest: { nonce: string; uri: string; response: string }): Promise<string | null> {
    const form = new URLSearchParams({
      hostname: this.opts.hostname,
      section: 'directory',
      tag_name: 'domain',
      key_name: 'name',
      key_value: req.domain,
      'Event-Name': 'REQUEST_PARAMS',
      action: 'sip_auth',
      sip_profile: this.opts.profile,
      sip_user_agent: 'dialer-switch-simulator softphone',
      sip_auth_username: req.username,
      sip_auth_realm: req.domain,
      sip_auth_nonce: digest.nonce,
      sip_auth_uri: digest.uri,
      sip_contact_user: req.extension,
      sip_contact_host: '127.0.0.1',
      sip_to_user: req.extension,
      sip_to_host: req.domain,
      sip_from_user: req.extension,
      sip_from_host: req.domain,
      sip_request_host: req.domain,
      sip_auth_method: 'REGISTER',
      sip_auth_response: digest.response,
      key: 'id',
      user: req.username,
      domain: req.domain,
    });
    const headers: Record<string, string> = { 'Content-Type': 'application/x-www-form-urlencoded' };
    if (directory.credentials) headers.Authorization = `Basic ${Buffer.from(directory.credentials, 'utf8').toString('base64')}`;
    const res = await fetch(directory.url, { method: 'POST', headers, body: form.toString(), signal: AbortSignal.timeout(5000) });
    const body = await res.text();
    if (!res.ok) throw new Error(`directory answered ${res.status}`);
    return passwordFromDirectory(body, req.username);
  }
}
