import type { AppDeps } from '../../deps';
import { directoryCredentials } from './switch-directory.repository';
import { NOT_FOUND_XML, userXml } from './switch-directory.xml';

/** The form fields of a mod_xml_curl directory request the answer depends on. */
export interface DirectoryRequest {
  section?: string;
  action?: string;
  user?: string;
  domain?: string;
  /** sip_auth: the REGISTER's address-of-record users. */
  sip_to_user?: string;
  sip_from_user?: string;
}

const UUID_LABEL_RE = /^([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.(.+)$/i;
const USER_RE = /^[A-Za-z0-9._-]{1,64}$/;

/**
 * Which domains the directory answers for, and the tenant a domain names: the deployment's
 * SIP_DOMAIN (any tenant: a credential username is unique across tenants), or
 * `<tenant-id>.<SIP_DOMAIN>` (that tenant only, so `user/<extension>@<tenant-id>.<SIP_DOMAIN>` is
 * unambiguous where tenants share extensions). Without SIP_DOMAIN any domain is served.
 */
export function domainScope(domain: string, sipDomain: string | undefined): { tenantId: string | null } | null {
  const d = domain.toLowerCase();
  const tenanted = UUID_LABEL_RE.exec(d);
  const base = sipDomain?.toLowerCase();
  if (tenanted && (base === undefined || tenanted[2] === base)) return { tenantId: tenanted[1]! };
  if (base === undefined || d === base) return { tenantId: null };
  return null;
}

/**
 * The directory's answer to one switch request: the user entry of a checked-in browser seat's live
 * ephemeral credential (its password decrypted for this answer only), or FreeSWITCH's "not found".
 * A REGISTER (action sip_auth) must register the seat's own extension: a credential presented for
 * another address-of-record is not served. A user that matches more than one seat (an extension
 * two tenants share on one domain) is not served either.
 */
export async function answerDirectory(deps: AppDeps, req: DirectoryRequest): Promise<{ xml: string; served: boolean }> {
  const notFound = { xml: NOT_FOUND_XML, served: false };
  if (req.section !== undefined && req.section !== 'directory') return notFound;
  const user = req.user?.trim() ?? '';
  const domain = req.domain?.trim() ?? '';
  if (!USER_RE.test(user) || domain === '') return notFound;
  const scope = domainScope(domain, deps.config.SIP_DOMAIN);
  if (!scope) return notFound;
  const found = await directoryCredentials(deps.db, user, scope.tenantId);
  const byUsername = found.filter((c) => c.username === user);
  const match = byUsername.length === 1 ? byUsername[0]! : found.length === 1 ? found[0]! : null;
  if (!match) return notFound;
  if (req.action === 'sip_auth') {
    const aor = [req.sip_to_user, req.sip_from_user].filter((v): v is string => typeof v === 'string' && v !== '');
    if (match.username !== user || aor.some((v) => v !== match.sip_extension)) return notFound;
  }
  return {
    xml: userXml({ domain, username: match.username, extension: match.sip_extension, password: deps.box.decrypt(match.password_ciphertext) }),
    served: true,
  };
}
