-- Events: outbound webhook endpoints, the transactional outbox of deliveries with their attempts,
-- and websocket tickets and connections.

CREATE TABLE webhook_endpoints (
  id                          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  tenant_id                   uuid NOT NULL REFERENCES tenants (id),
  url                         text NOT NULL,
  events                      text[] NOT NULL CHECK (cardinality(events) > 0),
  enabled                     boolean NOT NULL DEFAULT true,
  disabled_reason             text,
  -- The signing secret must be usable (HMAC key), so it is encrypted at rest (CryptoBox), never hashed.
  secret_ciphertext           text NOT NULL,
  secret_hint                 text NOT NULL,
  previous_secret_ciphertext  text,
  previous_secret_expires_at  timestamptz(3),
  created_at                  timestamptz(3) NOT NULL DEFAULT now(),
  updated_at                  timestamptz(3) NOT NULL DEFAULT now()
);
CREATE INDEX webhook_endpoints_page_idx ON webhook_endpoints (tenant_id, created_at, id);
CREATE TRIGGER webhook_endpoints_updated_at BEFORE UPDATE ON webhook_endpoints FOR EACH ROW EXECUTE FUNCTION set_updated_at();

-- The outbox: one row per (event, endpoint), written in the transaction that persists the fact.
-- body holds the envelope exactly as it will be sent (serialized once, never rebuilt); id is the
-- X-DD-Delivery-Id. status: pending (next_attempt_at says when), delivered, dead (the ladder ran
-- out: a dead letter), cancelled (the endpoint answered 410 or was disabled before delivery).
CREATE TABLE webhook_deliveries (
  id               uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  tenant_id        uuid NOT NULL REFERENCES tenants (id),
  endpoint_id      uuid NOT NULL REFERENCES webhook_endpoints (id),
  event            text NOT NULL,
  event_id         text NOT NULL,
  occurred_at      timestamptz(3) NOT NULL,
  body             text NOT NULL,
  status           text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered', 'dead', 'cancelled')),
  attempts         integer NOT NULL DEFAULT 0,
  next_attempt_at  timestamptz(3) NOT NULL DEFAULT now(),
  -- A dispatcher holds the row until this moment while it delivers (a crashed one's claim lapses).
  claimed_until    timestamptz(3),
  last_status_code integer,
  last_error       text,
  created_at       timestamptz(3) NOT NULL DEFAULT clock_timestamp(),
  delivered_at     timestamptz(3),
  dead_at          timestamptz(3),
  UNIQUE (endpoint_id, event_id)
);
CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_endpoint_idx ON webhook_deliveries (tenant_id, endpoint_id, created_at, id);
CREATE TRIGGER webhook_deliveries_no_delete BEFORE DELETE ON webhook_deliveries FOR EACH ROW EXECUTE FUNCTION refuse_mutation();

-- Every HTTP attempt of a delivery, append-only: what was sent where and what came back.
CREATE TABLE webhook_delivery_attempts (
  id                uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  tenant_id         uuid NOT NULL REFERENCES tenants (id),
  delivery_id       uuid NOT NULL REFERENCES webhook_deliveries (id),
  endpoint_id       uuid NOT NULL REFERENCES webhook_endpoints (id),
  attempt           integer NOT NULL CHECK (attempt >= 1),
  started_at        timestamptz(3) NOT NULL,
  duration_ms       integer NOT NULL,
  status_code       integer,
  -- Why no usable answer came: egress_refused, connect_timeout, timeout, network error text.
  error             text,
  response_excerpt  text,
  connected_address text,
  UNIQUE (delivery_id, attempt)
);
CREATE INDEX webhook_delivery_attempts_endpoint_idx ON webhook_delivery_attempts (tenant_id, endpoint_id, started_at, id);
CREATE TRIGGER webhook_delivery_attempts_no_update BEFORE UPDATE ON webhook_delivery_attempts FOR EACH ROW EXECUTE FUNCTION refuse_mutation();
CREATE TRIGGER webhook_delivery_attempts_no_delete BEFORE DELETE ON webhook_delivery_attempts FOR EACH ROW EXECUTE FUNCTION refuse_mutation();

-- Websocket tickets: single use, sha256 at rest; principal is what minted it (inherited by the socket).
CREATE TABLE ws_tickets (
  id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  tenant_id       uuid NOT NULL REFERENCES tenants (id),
  token_hash      text NOT NULL UNIQUE,
  lane            text NOT NULL CHECK (lane IN ('tenant', 'agent')),
  principal_kind  text NOT NULL,
  principal_id    text NOT NULL,
  agent_id        uuid,
  expires_at      timestamptz(3) NOT NULL,
  redeemed_at     timestamptz(3),
  created_at      timestamptz(3) NOT NULL DEFAULT now()
);

-- Open sockets of every API process, for the per-tenant and per-widget-token caps; a row is a lease
-- its process renews every heartbeat (a crashed process's rows lapse).
CREATE TABLE ws_connections (
  id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  tenant_id       uuid NOT NULL REFERENCES tenants (id),
  lane            text NOT NULL,
  principal_kind  text NOT NULL,
  principal_id    text NOT NULL,
  lease_until     timestamptz(3) NOT NULL,
  opened_at       timestamptz(3) NOT NULL DEFAULT now()
);
CREATE INDEX ws_connections_tenant_idx ON ws_connections (tenant_id, lease_until);

DO $$
DECLARE t text;
BEGIN
  FOREACH t IN ARRAY ARRAY['webhook_endpoints', 'webhook_deliveries', 'webhook_delivery_attempts', 'ws_tickets', 'ws_connections']
  LOOP
    EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', t);
    EXECUTE format('ALTER TABLE %I FORCE ROW LEVEL SECURITY', t);
    EXECUTE format('CREATE POLICY tenant_isolation ON %I USING (tenant_id = app_tenant_id()) '
                   'WITH CHECK (tenant_id = app_tenant_id())', t);
  END LOOP;
END $$;

GRANT SELECT, INSERT, UPDATE ON webhook_endpoints, webhook_deliveries, ws_tickets TO dialer_app;
GRANT SELECT, INSERT ON webhook_delivery_attempts TO dialer_app;
GRANT SELECT, INSERT, UPDATE, DELETE ON ws_connections TO dialer_app;

-- The dispatcher claims due deliveries of every tenant before it knows whose they are: a narrow
-- SECURITY DEFINER claim (owned by dialer_owner) that answers only ids and tenants, then each
-- delivery is worked inside its own tenant's transaction.
CREATE FUNCTION webhook_claim_due(p_limit integer, p_hold_seconds integer)
  RETURNS TABLE (delivery_id uuid, tenant_id uuid)
  LANGUAGE sql VOLATILE SECURITY DEFINER SET search_path = public, pg_temp
  AS $$
    UPDATE webhook_deliveries d SET claimed_until = clock_timestamp() + make_interval(secs => p_hold_seconds)
     WHERE d.id IN (SELECT x.id FROM webhook_deliveries x
                     WHERE x.status = 'pending' AND x.next_attempt_at <= clock_timestamp()
                       AND (x.claimed_until IS NULL OR x.claimed_until < clock_timestamp())
                     ORDER BY x.next_attempt_at LIMIT p_limit FOR UPDATE SKIP LOCKED)
    RETURNING d.id, d.tenant_id
  $$;

-- When the next pending delivery falls due (null: none), so an idle dispatcher sleeps exactly that long.
CREATE FUNCTION webhook_next_due()
  RETURNS timestamptz
  LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp
  AS $$ SELECT min(next_attempt_at) FROM webhook_deliveries WHERE status = 'pending' $$;

-- A websocket ticket is redeemed before the tenant is known (the ticket is the credential).
CREATE FUNCTION ws_redeem_ticket(p_token_hash text)
  RETURNS TABLE (ticket_id uuid, tenant_id uuid, lane text, principal_kind text, principal_id text, agent_id uuid, tenant_status text)
  LANGUAGE sql VOLATILE SECURITY DEFINER SET search_path = public, pg_temp
  AS $$
    UPDATE ws_tickets k SET redeemed_at = clock_timestamp()
      FROM tenants t
     WHERE k.token_hash = p_token_hash AND k.redeemed_at IS NULL AND k.expires_at > clock_timestamp() AND t.id = k.tenant_id
    RETURNING k.id, k.tenant_id, k.lane, k.principal_kind, k.principal_id, k.agent_id, t.status
  $$;

REVOKE ALL ON FUNCTION webhook_claim_due(integer, integer), webhook_next_due(), ws_redeem_ticket(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION webhook_claim_due(integer, integer), webhook_next_due(), ws_redeem_ticket(text) TO dialer_app;
