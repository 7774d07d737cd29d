import type { AppDeps } from '../../deps';
import { egressPost } from '../../lib/egress-http';
import { AppError } from '../../lib/errors';

/**
 * The SIP edge (SBC) API that carriers and inbound routes are pushed to. SBC_API_URL unset means
 * this environment has no edge: callers record the intent and answer `sbc_disabled`.
 *
 * Wire shape (every call a POST through the egress check, because egressPost is the one outbound
 * path that re-checks the connected address; `Authorization: Bearer SBC_API_TOKEN` when the token
 * is set; JSON bodies; any 2xx accepts, anything else rejects):
 *   POST {SBC_API_URL}/trunks/{carrier_id}                 {account_id, tenant_id, name, sip_proxy, source_ips}  upsert
 *   POST {SBC_API_URL}/trunks/{carrier_id}/revoke          {}                                                    idempotent
 *   POST {SBC_API_URL}/inbound-routes/{route_id}           {tenant_id, e164, dest_type, dest_ref, recording, ai_enabled}  upsert
 *   POST {SBC_API_URL}/inbound-routes/{route_id}/disable   {}                                                    idempotent
 */

export type EdgeRequest =
  | { kind: 'trunk.provision'; id: string; body: Record<string, unknown> }
  | { kind: 'trunk.revoke'; id: string }
  | { kind: 'inbound_route.provision'; id: string; body: Record<string, unknown> }
  | { kind: 'inbound_route.disable'; id: string };

/** Only the status decides; a short excerpt is enough and is never shown. */
const KEEP_BYTES = 256;

export const edgeConfigured = (deps: Pick<AppDeps, 'config'>): boolean => Boolean(deps.config.SBC_API_URL?.trim());

function pathOf(req: EdgeRequest): string {
  const id = encodeURIComponent(req.id);
  switch (req.kind) {
    case 'trunk.provision':
      return `/trunks/${id}`;
    case 'trunk.revoke':
      return `/trunks/${id}/revoke`;
    case 'inbound_route.provision':
      return `/inbound-routes/${id}`;
    case 'inbound_route.disable':
      return `/inbound-routes/${id}/disable`;
  }
}

export const sbcError = (message: string) => new AppError(502, 'sbc_error', message);

/**
 * Sends one request to the edge. Resolves when it answered 2xx; a rejection, a refused egress
 * check on SBC_API_URL and a network failure are all 502 sbc_error: the caller cannot tell an edge
 * that refused from one it never reached, and in both cases nothing was applied there. Messages
 * carry the HTTP status or the failure class, never the token or the edge's answer.
 */
export async function sendToEdge(deps: Pick<AppDeps, 'config' | 'resolver'>, req: EdgeRequest): Promise<void> {
  const base = (deps.config.SBC_API_URL ?? '').trim().replace(/\/+$/, '');
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
  const token = deps.config.SBC_API_TOKEN?.trim();
  if (token) headers.authorization = `Bearer ${token}`;
  const body = JSON.stringify('body' in req ? req.body : {});
  const res = await egressPost(`${base}${pathOf(req)}`, headers, body, {
    allowlist: deps.config.egressAllowlist,
    resolve: deps.resolver,
    keepBytes: KEEP_BYTES,
  });
  if (res.status !== null && res.status >= 200 && res.status < 300) return;
  if (res.status !== null) throw sbcError(`the SIP edge rejected the request (HTTP ${res.status})`);
  const cause = (res.error ?? 'unknown').split(':')[0];
  throw sbcError(`the SIP edge could not be reached (${cause})`);
}
