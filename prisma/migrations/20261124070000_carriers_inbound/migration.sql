-- Carriers (SIP trunks) and inbound routes. Issue 10, numbers part.

-- A tenant's own trunks (scope sede) and account-wide ones (tenant_id null, scope empresa).
CREATE TABLE carriers (
  id               uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  account_id       uuid NOT NULL,
  tenant_id        uuid REFERENCES tenants (id),
  kind             text NOT NULL CHECK (kind IN ('house', 'byoc')),
  name             text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
  sip_proxy        text CHECK (length(sip_proxy) <= 255),
  source_ips       text[] NOT NULL DEFAULT '{}',
  status           text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'disabled', 'retired')),
  -- What the SIP edge was last told: provisioned, sbc_disabled (no edge here: intent only), revoked.
  edge_status      text CHECK (edge_status IN ('provisioned', 'sbc_disabled', 'revoked')),
  edge_updated_at  timestamptz(3),
  created_at       timestamptz(3) NOT NULL DEFAULT now(),
  updated_at       timestamptz(3) NOT NULL DEFAULT now()
);
CREATE INDEX carriers_tenant_idx ON carriers (tenant_id, created_at, id) WHERE tenant_id IS NOT NULL;
CREATE INDEX carriers_account_idx ON carriers (account_id, created_at, id) WHERE tenant_id IS NULL;
CREATE TRIGGER carriers_updated_at BEFORE UPDATE ON carriers FOR EACH ROW EXECUTE FUNCTION set_updated_at();

ALTER TABLE carriers ENABLE ROW LEVEL SECURITY;
ALTER TABLE carriers FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON carriers
  USING (tenant_id = app_tenant_id()
         OR (tenant_id IS NULL AND account_id = (SELECT t.account_id FROM tenants t WHERE t.id = app_tenant_id())))
  WITH CHECK (tenant_id = app_tenant_id()
              OR (tenant_id IS NULL AND account_id = (SELECT t.account_id FROM tenants t WHERE t.id = app_tenant_id())));

CREATE TABLE inbound_routes (
  id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  tenant_id       uuid NOT NULL REFERENCES tenants (id),
  e164            text NOT NULL CHECK (e164 ~ '^\+[1-9][0-9]{6,14}$'),
  dest_type       text NOT NULL CHECK (dest_type IN ('agent', 'queue', 'ivr')),
  dest_ref        text CHECK (length(dest_ref) <= 200),
  recording       boolean NOT NULL DEFAULT false,
  ai_enabled      boolean NOT NULL DEFAULT false,
  status          text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'disabled')),
  notes           text CHECK (length(notes) <= 2000),
  edge_status     text CHECK (edge_status IN ('provisioned', 'sbc_disabled', 'revoked')),
  edge_updated_at timestamptz(3),
  created_at      timestamptz(3) NOT NULL DEFAULT now(),
  updated_at      timestamptz(3) NOT NULL DEFAULT now()
);
-- A number routes to one place platform-wide while active (the edge cannot send it two ways).
CREATE UNIQUE INDEX inbound_routes_e164_active_key ON inbound_routes (e164) WHERE status = 'active';
CREATE INDEX inbound_routes_tenant_idx ON inbound_routes (tenant_id, created_at, id);
CREATE TRIGGER inbound_routes_updated_at BEFORE UPDATE ON inbound_routes FOR EACH ROW EXECUTE FUNCTION set_updated_at();

ALTER TABLE inbound_routes ENABLE ROW LEVEL SECURITY;
ALTER TABLE inbound_routes FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON inbound_routes USING (tenant_id = app_tenant_id()) WITH CHECK (tenant_id = app_tenant_id());

-- Queue admission for inbound legs (SPEC InboundRoute: queue legs are admitted only with this flag).
ALTER TABLE tenants ADD COLUMN inbound_queue_stream_enabled boolean NOT NULL DEFAULT false;

GRANT SELECT, INSERT, UPDATE ON carriers, inbound_routes TO dialer_app;
