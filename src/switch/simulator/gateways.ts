import type { DirectoryClient } from './registrar';

/**
 * The simulator's sofia gateways of the `external` profile, learned as FreeSWITCH learns them: the
 * static configuration's gateways (the deployment default, `default`) are there from the start; any
 * other is added by `sofia profile external startgw <name>`, which fetches sofia.conf through the
 * mod_xml_curl `configuration` binding (the product's switch endpoint, the same URL and credentials
 * as the directory) with `profile`, `reconfig=true` and `gateway=<name>`, and takes that gateway
 * from the answer. `killgw <name>` removes one. An originate through a gateway not in the table
 * fails INVALID_GATEWAY, as sofia's outgoing channel does.
 */

export const GATEWAY_PROFILE = 'external';
/** The gateways of the simulator's static sofia.conf: the deployment default gateway only. */
export const STATIC_GATEWAYS: readonly string[] = ['default'];

export interface Gateway {
  name: string;
  /** The gateway's `proxy` param (where its calls go); null for a static one. */
  proxy: string | null;
}

const NAME_RE = /^[\w.-]{1,128}$/;

const unescapeXml = (v: string): string =>
  v.replace(/&quot;/g, '"').replace(/&apos;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');

/**
 * The named gateway of `profile` in a sofia.conf configuration document, or null when the answer is
 * FreeSWITCH's "not found" result (the switch then falls back to its static file) or holds no such
 * gateway.
 */
export function gatewayFromConfiguration(xml: string, profile: string, name: string): Gateway | null {
  if (!/<document[^>]*type="freeswitch\/xml"/.test(xml) || !/<section[^>]*name="configuration"/.test(xml)) return null;
  const conf = /<configuration\b[^>]*name="sofia\.conf"[^>]*>([\s\S]*?)<\/configuration>/.exec(xml);
  if (!conf) return null;
  for (const p of conf[1]!.matchAll(/<profile\b([^>]*)>([\s\S]*?)<\/profile>/g)) {
    if (unescapeXml(/\bname="([^"]*)"/.exec(p[1]!)?.[1] ?? '') !== profile) continue;
    for (const g of p[2]!.matchAll(/<gateway\b([^>]*)>([\s\S]*?)<\/gateway>/g)) {
      if (unescapeXml(/\bname="([^"]*)"/.exec(g[1]!)?.[1] ?? '') !== name) continue;
      const proxy = /<param\s+name="proxy"\s+value="([^"]*)"\s*\/>/.exec(g[2]!)?.[1];
      const realm = /<param\s+name="realm"\s+value="([^"]*)"\s*\/>/.exec(g[2]!)?.[1];
      // sofia's rule: a gateway needs a proxy or a realm to reach anything.
      const target = proxy ?? realm;
      return target ? { name, proxy: unescapeXml(target) } : null;
    }
  }
  return null;
}

export class GatewayTable {
  private readonly table = new Map<string, Gateway>(STATIC_GATEWAYS.map((name) => [name, { name, proxy: null }]));

  constructor(private readonly hostname: string) {}

  has(name: string): boolean {
    return this.table.has(name);
  }

  list(): Gateway[] {
    return [...this.table.values()].sort((a, b) => a.name.localeCompare(b.name));
  }

  /** `sofia status gateway <name>`: FreeSWITCH's status block, or `Invalid Gateway!`. */
  status(name: string): string {
    const gw = this.table.get(name);
    if (!gw) return 'Invalid Gateway!\n';
    const line = '='.repeat(80);
    return [line, `Name    \t${gw.name}`, `Profile \t${GATEWAY_PROFILE}`, `Proxy   \t${gw.proxy ?? 'static'}`, 'State   \tNOREG', 'Status  \tUP', line, ''].join('\n');
  }

  /**
   * `sofia profile external startgw <name>`: fetches the gateway through the configuration binding.
   * FreeSWITCH answers `+OK start gateway <name> complete` whether or not the answer held it (a
   * failed fetch falls back to the static file; an existing gateway is kept, a duplicate ignored).
   */
  async start(name: string, binding: DirectoryClient | null): Promise<string> {
    const done = `+OK start gateway ${name} complete\n`;
    if (!NAME_RE.test(name) || this.table.has(name) || !binding) return done;
    const form = new URLSearchParams({
      hostname: this.hostname,
      section: 'configuration',
      tag_name: 'configuration',
      key_name: 'name',
      key_value: 'sofia.conf',
      'Event-Name': 'REQUEST_PARAMS',
      profile: GATEWAY_PROFILE,
      reconfig: 'true',
      gateway: name,
    });
    const headers: Record<string, string> = { 'Content-Type': 'application/x-www-form-urlencoded' };
    if (binding.credentials) headers.Authorization = `Basic ${Buffer.from(binding.credentials, 'utf8').toString('base64')}`;
    try {
      const res = await fetch(binding.url, { method: 'POST', headers, body: form.toString(), signal: AbortSignal.timeout(5000) });
      const body = await res.text();
      const gw = res.ok ? gatewayFromConfiguration(body, GATEWAY_PROFILE, name) : null;
      if (gw && !this.table.has(name)) this.table.set(name, gw);
    } catch {
      // FreeSWITCH logs the failed fetch and reads its static file, which has no such gateway.
    }
    return done;
  }

  /** `sofia profile external killgw <name>`. */
  kill(name: string): string {
    if (!this.table.delete(name)) return '-ERR no such gateway.\n';
    return '+OK gateway marked for deletion.\n';
  }
}
