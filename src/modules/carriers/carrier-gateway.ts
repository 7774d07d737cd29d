import type { AppDeps } from '../../deps';
import type { SqlTx } from '../../lib/tenancy';
import type { SwitchCommands } from '../../switch/esl';
import { campaignCarrier, carrierStatus, switchCarrierGateway } from './carrier.repository';
import { carrierGatewayName } from './carrier.rules';

/**
 * Trunks on the switch. Each carrier is a sofia gateway of the `external` profile named
 * `carrier-<id>` (carrierGatewayName). The switch learns it through the product's mod_xml_curl
 * `configuration` binding (answerSwitchConfiguration) when it is told `startgw` for it; the dial
 * path does that the first time a call needs it (ensureGateway). Which trunk a campaign's calls take
 * is decided again at every placement (campaignTrunk), so disabling or retiring a carrier stops its
 * calls at the next tick.
 */

/** The sofia profile the product's gateways belong to (FreeSWITCH's stock `external`). */
export const GATEWAY_PROFILE = 'external';

/** Hang-up causes of the not_placed row of a call whose trunk cannot carry it. */
export const TRUNK_CAUSES = { disabled: 'TRUNK_DISABLED', retired: 'TRUNK_RETIRED', unknown: 'TRUNK_UNKNOWN' } as const;
export type TrunkCause = (typeof TRUNK_CAUSES)[keyof typeof TRUNK_CAUSES];

const GATEWAY_NAME_RE = /^carrier-([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/;

/** The carrier id a gateway name was derived from, or null for any other name (the deployment default). */
export function carrierIdOfGateway(gateway: string): string | null {
  return GATEWAY_NAME_RE.exec(gateway)?.[1] ?? null;
}

export type Trunk =
  /** gateway null: the deployment default gateway (the switch's own, `default`). */
  | { ok: true; gateway: string | null; carrierId: string | null }
  | { ok: false; cause: TrunkCause; carrierId: string; gateway: string };

/**
 * The trunk a campaign's calls go out through now: the run's `gateway` option (a carrier's gateway,
 * fixed when the run started) overrides the campaign's `carrier`; with neither, the deployment
 * default. A carrier is read again each time: disabled or retired (or no longer visible to the
 * tenant) means no call goes out through it. A run option naming a gateway no carrier derives
 * (one started before gateways named carriers) is used as it is.
 */
export async function campaignTrunk(sql: SqlTx, campaignId: string, runGateway: string | null): Promise<Trunk> {
  let carrierId: string | null;
  if (runGateway !== null) {
    carrierId = carrierIdOfGateway(runGateway);
    if (carrierId === null) return { ok: true, gateway: runGateway, carrierId: null };
  } else {
    carrierId = await campaignCarrier(sql, campaignId);
    if (carrierId === null) return { ok: true, gateway: null, carrierId: null };
  }
  const gateway = carrierGatewayName(carrierId);
  const status = await carrierStatus(sql, carrierId);
  if (status === 'active') return { ok: true, gateway, carrierId };
  const cause = status === 'disabled' ? TRUNK_CAUSES.disabled : status === 'retired' ? TRUNK_CAUSES.retired : TRUNK_CAUSES.unknown;
  return { ok: false, cause, carrierId, gateway };
}

/**
 * Makes sure the switch has a carrier's gateway before a call is sent through it: when it does not
 * (first use, or a switch restarted since), it is told to load it from the configuration binding.
 * Answers whether the switch has it afterwards; the deployment default and other names the
 * switch's static configuration holds are not carriers and are not loaded this way.
 */
export async function ensureGateway(commands: SwitchCommands, gateway: string): Promise<boolean> {
  if (await commands.gatewayKnown(gateway)) return true;
  if (carrierIdOfGateway(gateway) === null) return false;
  await commands.startGateway(gateway);
  return commands.gatewayKnown(gateway);
}

const escapeXml = (v: string): string => v.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&apos;');

/** What FreeSWITCH reads as "no answer here": it falls back to its static configuration file. */
export const CONFIGURATION_NOT_FOUND_XML =
  '<?xml version="1.0" encoding="UTF-8" standalone="no"?>\n<document type="freeswitch/result">\n  <section name="result">\n    <result status="not found"/>\n  </section>\n</document>\n';

/**
 * One carrier's gateway as sofia.conf holds it. The carrier authenticates the platform by source
 * address (its trunk's source_ips are on the SIP edge), so the gateway does not register; the
 * caller id travels in From, as carriers expect; every leg carries the carrier's id.
 */
export function gatewayConfigurationXml(carrierId: string, sipProxy: string): string {
  const name = carrierGatewayName(carrierId);
  return [
    '<?xml version="1.0" encoding="UTF-8" standalone="no"?>',
    '<document type="freeswitch/xml">',
    '  <section name="configuration">',
    '    <configuration name="sofia.conf" description="Carrier gateways">',
    '      <profiles>',
    `        <profile name="${GATEWAY_PROFILE}">`,
    '          <gateways>',
    `            <gateway name="${escapeXml(name)}">`,
    `              <param name="proxy" value="${escapeXml(sipProxy)}"/>`,
    '              <param name="register" value="false"/>',
    '              <param name="caller-id-in-from" value="true"/>',
    '              <variables>',
    `                <variable name="dd_carrier_id" value="${escapeXml(carrierId.toLowerCase())}" direction="outbound"/>`,
    '              </variables>',
    '            </gateway>',
    '          </gateways>',
    '        </profile>',
    '      </profiles>',
    '    </configuration>',
    '  </section>',
    '</document>',
    '',
  ].join('\n');
}

/** The form fields of a mod_xml_curl `configuration` request the answer depends on. */
export interface ConfigurationRequest {
  key_value?: string;
  profile?: string;
  gateway?: string;
}

/**
 * The configuration binding's answer: for sofia.conf of the external profile asked for one gateway
 * (what `startgw <name>` fetches), that carrier's gateway when the carrier is active and has a
 * sip_proxy. Everything else, the profiles' own settings and the switch's other files included, is
 * "not found", so the switch reads its static configuration for them.
 */
export async function answerSwitchConfiguration(deps: AppDeps, req: ConfigurationRequest): Promise<{ xml: string; served: boolean }> {
  const notFound = { xml: CONFIGURATION_NOT_FOUND_XML, served: false };
  if (req.key_value !== 'sofia.conf' || req.profile !== GATEWAY_PROFILE || !req.gateway) return notFound;
  const carrierId = carrierIdOfGateway(req.gateway);
  if (carrierId === null) return notFound;
  const row = await switchCarrierGateway(deps.db, carrierId);
  return row ? { xml: gatewayConfigurationXml(row.id, row.sip_proxy), served: true } : notFound;
}
