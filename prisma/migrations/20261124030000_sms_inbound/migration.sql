-- An inbound text names the provider and the consumer's number, never a tenant. For a provider of
-- one tenant that tenant is the answer; an account-wide provider serves every tenant of its
-- account, so the inbound belongs to the conversation it answers: the tenant that last texted that
-- number through that provider (its latest outbound original). Answered only among the tenants of
-- the provider's account, for the provider the (verified) webhook came through; null when no
-- tenant of the account ever texted the number through it.
CREATE FUNCTION sms_inbound_tenant(p_provider_id uuid, p_from text)
  RETURNS uuid
  LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp
  AS $$
    SELECT m.tenant_id
      FROM sms_providers p
      JOIN tenants t ON t.account_id = p.account_id
      JOIN sms_messages m ON m.tenant_id = t.id
     WHERE p.id = p_provider_id
       AND m.provider_id = p.id
       AND m.to_e164 = p_from
       AND m.direction = 'outbound'
       AND m.corrects_id IS NULL
     ORDER BY m.occurred_at DESC, m.id DESC
     LIMIT 1
  $$;

REVOKE ALL ON FUNCTION sms_inbound_tenant(uuid, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION sms_inbound_tenant(uuid, text) TO dialer_app;
