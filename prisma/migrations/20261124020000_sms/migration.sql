-- SMS: providers (own and account-wide) and the append-only message ledger.

CREATE TABLE sms_providers (
  id                        uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  account_id                uuid NOT NULL,
  -- null = account-wide (scope empresa), inherited by every tenant of the account.
  tenant_id                 uuid REFERENCES tenants (id),
  adapter                   text NOT NULL CHECK (adapter IN ('http', 'carrier_a', 'mock')),
  region                    text NOT NULL CHECK (region IN ('us', 'mx', 'eu')),
  name                      text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
  base_url                  text,
  -- Write-only: an HMAC key (http, mock) or a base64 Ed25519 public key (carrier_a), encrypted at rest.
  webhook_secret_ciphertext text,
  status                    text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'disabled', 'retired')),
  created_at                timestamptz(3) NOT NULL DEFAULT now(),
  updated_at                timestamptz(3) NOT NULL DEFAULT now()
);
CREATE INDEX sms_providers_tenant_idx ON sms_providers (tenant_id, created_at, id);
CREATE INDEX sms_providers_account_idx ON sms_providers (account_id, created_at, id) WHERE tenant_id IS NULL;
CREATE TRIGGER sms_providers_updated_at BEFORE UPDATE ON sms_providers FOR EACH ROW EXECUTE FUNCTION set_updated_at();

-- The ledger: append-only. An original row per message (outbound queued, inbound received); every
-- later state is a transition row with corrects_id (sent, delivered, undelivered, failed). The
-- latest row is the message's state; the transitions are its history.
CREATE TABLE sms_messages (
  id                  uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  tenant_id           uuid NOT NULL REFERENCES tenants (id),
  direction           text NOT NULL CHECK (direction IN ('outbound', 'inbound')),
  status              text NOT NULL CHECK (status IN ('queued', 'sent', 'delivered', 'undelivered', 'failed', 'received')),
  from_e164           text,
  to_e164             text NOT NULL,
  body                text,
  segments            integer CHECK (segments >= 0),
  -- gsm7 or ucs2: how the body is encoded on the air (decides the segment count).
  encoding            text CHECK (encoding IN ('gsm7', 'ucs2')),
  client_ref          text,
  provider_id         uuid REFERENCES sms_providers (id),
  provider_message_id text,
  campaign_id         uuid REFERENCES campaigns (id),
  debt_id             uuid REFERENCES debts (id),
  consumer_ref        text,
  compliance_snapshot jsonb,
  -- Charged at provider accept (the sent transition): segments times the unit price then in force.
  cost_usd            numeric(12, 6),
  error_code          text,
  -- What the row is about when it is not a plain message: a keyword reply (stop_confirmation, help_reply, start_confirmation).
  kind                text,
  occurred_at         timestamptz(3) NOT NULL,
  corrects_id         uuid REFERENCES sms_messages (id),
  recorded_at         timestamptz(3) NOT NULL DEFAULT clock_timestamp()
);
CREATE UNIQUE INDEX sms_messages_client_ref_key ON sms_messages (tenant_id, client_ref) WHERE corrects_id IS NULL AND client_ref IS NOT NULL;
-- A receipt replayed by the provider adds nothing: one transition per (message, status).
CREATE UNIQUE INDEX sms_messages_transition_key ON sms_messages (corrects_id, status) WHERE corrects_id IS NOT NULL;
-- An inbound message replayed by the provider adds nothing.
CREATE UNIQUE INDEX sms_messages_inbound_key ON sms_messages (provider_id, provider_message_id) WHERE direction = 'inbound' AND corrects_id IS NULL;
CREATE INDEX sms_messages_provider_msg_idx ON sms_messages (provider_id, provider_message_id) WHERE provider_message_id IS NOT NULL;
CREATE INDEX sms_messages_page_idx ON sms_messages (tenant_id, recorded_at, id);
CREATE INDEX sms_messages_transitions_idx ON sms_messages (corrects_id, recorded_at) WHERE corrects_id IS NOT NULL;
CREATE INDEX sms_messages_to_idx ON sms_messages (tenant_id, to_e164, occurred_at) WHERE corrects_id IS NULL;
-- The compliance engine counts a debt's texts for the state caps.
CREATE INDEX sms_messages_debt_idx ON sms_messages (debt_id, occurred_at) WHERE corrects_id IS NULL AND direction = 'outbound';
CREATE TRIGGER sms_messages_no_update BEFORE UPDATE ON sms_messages FOR EACH ROW EXECUTE FUNCTION refuse_mutation();
CREATE TRIGGER sms_messages_no_delete BEFORE DELETE ON sms_messages FOR EACH ROW EXECUTE FUNCTION refuse_mutation();
CREATE TRIGGER sms_messages_no_truncate BEFORE TRUNCATE ON sms_messages FOR EACH STATEMENT EXECUTE FUNCTION refuse_mutation();

ALTER TABLE sms_messages ENABLE ROW LEVEL SECURITY;
ALTER TABLE sms_messages FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON sms_messages USING (tenant_id = app_tenant_id()) WITH CHECK (tenant_id = app_tenant_id());

-- A tenant sees its own providers and its account's account-wide ones; it writes only its own
-- (account-wide rows are written through the account_admin path, which sets the same tenant context).
ALTER TABLE sms_providers ENABLE ROW LEVEL SECURITY;
ALTER TABLE sms_providers FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON sms_providers
  USING (tenant_id = app_tenant_id()
         OR (tenant_id IS NULL AND account_id = (SELECT t.account_id FROM tenants t WHERE t.id = app_tenant_id())))
  WITH CHECK (tenant_id = app_tenant_id()
              OR (tenant_id IS NULL AND account_id = (SELECT t.account_id FROM tenants t WHERE t.id = app_tenant_id())));

GRANT SELECT, INSERT, UPDATE ON sms_providers TO dialer_app;
GRANT SELECT, INSERT ON sms_messages TO dialer_app;

-- Provider webhooks arrive without a tenant: this narrow lookup answers only what verifying the
-- signature needs (the adapter, the encrypted secret, status) and whose the provider is.
CREATE FUNCTION sms_provider_for_webhook(p_id uuid)
  RETURNS TABLE (provider_id uuid, account_id uuid, tenant_id uuid, adapter text, webhook_secret_ciphertext text, status text)
  LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp
  AS $$ SELECT p.id, p.account_id, p.tenant_id, p.adapter, p.webhook_secret_ciphertext, p.status FROM sms_providers p WHERE p.id = p_id $$;

-- A receipt names only the provider's message id: which tenant's message is it? Answered for the
-- provider the (verified) webhook came through, never across providers.
CREATE FUNCTION sms_message_tenant(p_provider_id uuid, p_provider_message_id text)
  RETURNS TABLE (tenant_id uuid, message_id uuid)
  LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp
  AS $$
    SELECT coalesce(o.tenant_id, m.tenant_id), coalesce(m.corrects_id, m.id)
      FROM sms_messages m LEFT JOIN sms_messages o ON o.id = m.corrects_id
     WHERE m.provider_id = p_provider_id AND m.provider_message_id = p_provider_message_id AND m.direction = 'outbound'
     LIMIT 1
  $$;

REVOKE ALL ON FUNCTION sms_provider_for_webhook(uuid), sms_message_tenant(uuid, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION sms_provider_for_webhook(uuid), sms_message_tenant(uuid, text) TO dialer_app;
