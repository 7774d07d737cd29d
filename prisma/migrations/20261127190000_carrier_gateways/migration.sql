-- Trunks (issue 18): a campaign's `carrier` is the id of one of the tenant's carriers (its own or an
-- account-wide one), the trunk its calls go out through (switch gateway `carrier-<id>`). Until now the
-- column was a free label nothing read: ids are normalized to lower case, and a value that names no
-- carrier the campaign's tenant sees is cleared (the campaign then dials through the deployment default).
UPDATE campaigns SET carrier = lower(btrim(carrier))
 WHERE carrier IS NOT NULL AND btrim(carrier) ~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$';

UPDATE campaigns c SET carrier = NULL
 WHERE c.carrier IS NOT NULL
   AND NOT EXISTS (
     SELECT 1 FROM carriers k JOIN tenants t ON t.id = c.tenant_id
      WHERE k.id::text = c.carrier AND (k.tenant_id = c.tenant_id OR (k.tenant_id IS NULL AND k.account_id = t.account_id)));

-- The switch fetches a carrier's gateway (mod_xml_curl `configuration` binding, sofia.conf) before any
-- tenant is known: this narrow lookup answers only an active carrier that has somewhere to send calls.
CREATE FUNCTION switch_carrier_gateway(p_id uuid)
  RETURNS TABLE (id uuid, sip_proxy text)
  LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp
  AS $$
    SELECT c.id, c.sip_proxy FROM carriers c WHERE c.id = p_id AND c.status = 'active' AND c.sip_proxy IS NOT NULL
  $$;

REVOKE ALL ON FUNCTION switch_carrier_gateway(uuid) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION switch_carrier_gateway(uuid) TO dialer_app;
