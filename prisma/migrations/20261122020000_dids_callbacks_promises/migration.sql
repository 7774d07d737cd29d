-- Numbers (DIDs), callbacks and promises to pay.

CREATE TABLE dids (
  id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  tenant_id   uuid NOT NULL REFERENCES tenants (id),
  e164        text NOT NULL CHECK (e164 ~ '^\+[1-9][0-9]{6,14}$'),
  npa         text CHECK (npa ~ '^[2-9][0-9]{2}$'),
  us_state    text CHECK (us_state ~ '^[A-Z]{2}$'),
  attestation text NOT NULL DEFAULT 'unknown' CHECK (attestation IN ('A', 'B', 'C', 'unknown')),
  status      text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'quarantine', 'retired')),
  origin      text NOT NULL DEFAULT 'customer' CHECK (origin IN ('house', 'customer')),
  labels      text[] NOT NULL DEFAULT '{}',
  notes       text,
  created_at  timestamptz(3) NOT NULL DEFAULT now(),
  updated_at  timestamptz(3) NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX dids_e164_key ON dids (tenant_id, e164);
CREATE TRIGGER dids_updated_at BEFORE UPDATE ON dids FOR EACH ROW EXECUTE FUNCTION set_updated_at();

CREATE TABLE callbacks (
  id            uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  tenant_id     uuid NOT NULL REFERENCES tenants (id),
  debt_id       uuid NOT NULL REFERENCES debts (id),
  contact_phone text NOT NULL,
  campaign_id   uuid REFERENCES campaigns (id),
  agent_id      uuid REFERENCES agents (id),
  scheduled_at  timestamptz(3) NOT NULL,
  note          text,
  priority      integer NOT NULL DEFAULT 0,
  status        text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'done', 'cancelled', 'missed')),
  created_at    timestamptz(3) NOT NULL DEFAULT now(),
  updated_at    timestamptz(3) NOT NULL DEFAULT now()
);
CREATE INDEX callbacks_due_idx ON callbacks (tenant_id, status, scheduled_at, priority);
CREATE INDEX callbacks_debt_idx ON callbacks (tenant_id, debt_id);
CREATE TRIGGER callbacks_updated_at BEFORE UPDATE ON callbacks FOR EACH ROW EXECUTE FUNCTION set_updated_at();

CREATE TABLE promises (
  id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  tenant_id       uuid NOT NULL REFERENCES tenants (id),
  debt_id         uuid NOT NULL REFERENCES debts (id),
  call_attempt_id uuid NOT NULL REFERENCES call_attempts (id),
  amount_cents    bigint NOT NULL CHECK (amount_cents > 0),
  currency        text NOT NULL CHECK (currency IN ('MXN', 'USD')),
  promised_date   date NOT NULL,
  note            text,
  status          text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'kept', 'broken', 'cancelled')),
  created_at      timestamptz(3) NOT NULL DEFAULT now(),
  updated_at      timestamptz(3) NOT NULL DEFAULT now()
);
CREATE INDEX promises_page_idx ON promises (tenant_id, created_at, id);
CREATE INDEX promises_debt_idx ON promises (tenant_id, debt_id);
CREATE TRIGGER promises_updated_at BEFORE UPDATE ON promises FOR EACH ROW EXECUTE FUNCTION set_updated_at();

DO $$
DECLARE t text;
BEGIN
  FOREACH t IN ARRAY ARRAY['dids', 'callbacks', 'promises']
  LOOP
    EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', t);
    EXECUTE format('ALTER TABLE %I FORCE ROW LEVEL SECURITY', t);
    EXECUTE format('CREATE POLICY tenant_isolation ON %I USING (tenant_id = app_tenant_id()) '
                   'WITH CHECK (tenant_id = app_tenant_id())', t);
  END LOOP;
END $$;

-- DIDs are retired, callbacks and promises move through their states: nothing is deleted.
GRANT SELECT, INSERT, UPDATE ON dids, callbacks, promises TO dialer_app;
