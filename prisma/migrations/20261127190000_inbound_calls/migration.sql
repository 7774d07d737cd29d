-- Inbound calls (issue 18 item 6). A call a consumer places to a tenant's DID is a CDR row of
-- direction 'inbound': it is kept as evidence like any call, but it is not an attempt to
-- communicate by the collector, so the frequency counts (7-in-7, state limits) read only
-- 'outbound' rows. An inbound caller may match no debt: only an inbound row may carry no debt.
ALTER TABLE call_attempts ADD COLUMN direction text NOT NULL DEFAULT 'outbound' CHECK (direction IN ('outbound', 'inbound'));
ALTER TABLE call_attempts ALTER COLUMN debt_id DROP NOT NULL;
ALTER TABLE call_attempts ADD CONSTRAINT call_attempts_debt_unless_inbound CHECK (debt_id IS NOT NULL OR direction = 'inbound');

-- The switch reports a call to a number before anyone knows whose number it is: the tenant is
-- resolved from the called DID, outside any tenant's row security, and nothing else is answered.
-- Only an ACTIVE route whose number is an ACTIVE DID of the same tenant routes a call.
CREATE FUNCTION auth_inbound_route(p_e164 text)
  RETURNS TABLE (route_id uuid, tenant_id uuid, dest_type text, dest_ref text, recording boolean, ai_enabled boolean, queue_stream_enabled boolean)
  LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp
  AS $$
    SELECT r.id, r.tenant_id, r.dest_type, r.dest_ref, r.recording, r.ai_enabled, t.inbound_queue_stream_enabled
      FROM inbound_routes r
      JOIN tenants t ON t.id = r.tenant_id AND t.status = 'active'
     WHERE r.e164 = p_e164 AND r.status = 'active'
       AND EXISTS (SELECT 1 FROM dids d WHERE d.tenant_id = r.tenant_id AND d.e164 = r.e164 AND d.status = 'active')
  $$;
REVOKE ALL ON FUNCTION auth_inbound_route(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION auth_inbound_route(text) TO dialer_app;
