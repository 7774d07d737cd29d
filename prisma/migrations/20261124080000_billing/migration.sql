-- Billing: one account per tenant, an append-only balance ledger and the recorded cap crossings.
-- Issue 10, billing part. Money is numeric(14,4), never float.

-- scheme null = billing off for the tenant. enforcement_mode null reads as hard_block (enforcement is
-- unconditional; the mode only chooses how). blocked_at is set while the tenant is over its cap or out of
-- prepaid funds, so the send and dial paths read one column instead of recomputing spend.
CREATE TABLE billing_accounts (
  tenant_id         uuid PRIMARY KEY REFERENCES tenants (id),
  scheme            text CHECK (scheme IN ('prepaid', 'postpaid', 'subscription')),
  enforcement_mode  text CHECK (enforcement_mode IN ('graduated', 'hard_block')),
  alert_thresholds  integer[] NOT NULL DEFAULT '{50,80,100}'
                    CHECK (cardinality(alert_thresholds) <= 10 AND 0 < ALL (alert_thresholds) AND 100 >= ALL (alert_thresholds)),
  cap_usd           numeric(14, 4) CHECK (cap_usd >= 0),
  credit_limit_usd  numeric(14, 4) NOT NULL DEFAULT 0 CHECK (credit_limit_usd >= 0),
  blocked_at        timestamptz(3),
  blocked_reason    text CHECK (blocked_reason IN ('cap_reached', 'funds_exhausted')),
  created_at        timestamptz(3) NOT NULL DEFAULT now(),
  updated_at        timestamptz(3) NOT NULL DEFAULT now(),
  CHECK ((blocked_at IS NULL) = (blocked_reason IS NULL))
);
CREATE TRIGGER billing_accounts_updated_at BEFORE UPDATE ON billing_accounts FOR EACH ROW EXECUTE FUNCTION set_updated_at();

-- Funds as the operator moved them: cash, grant and deposit credits, holds and their releases. Balances
-- are sums of this ledger, so a correction is a new entry, never an edit.
CREATE TABLE billing_ledger (
  id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  tenant_id   uuid NOT NULL REFERENCES tenants (id),
  kind        text NOT NULL CHECK (kind IN ('cash', 'grant', 'deposit', 'hold', 'hold_release')),
  amount_usd  numeric(14, 4) NOT NULL CHECK (amount_usd > 0),
  note        text CHECK (length(note) <= 500),
  created_at  timestamptz(3) NOT NULL DEFAULT now()
);
CREATE INDEX billing_ledger_tenant_idx ON billing_ledger (tenant_id, created_at, id);
CREATE TRIGGER billing_ledger_no_update BEFORE UPDATE ON billing_ledger FOR EACH ROW EXECUTE FUNCTION refuse_mutation();
CREATE TRIGGER billing_ledger_no_delete BEFORE DELETE ON billing_ledger FOR EACH ROW EXECUTE FUNCTION refuse_mutation();
CREATE TRIGGER billing_ledger_no_truncate BEFORE TRUNCATE ON billing_ledger FOR EACH STATEMENT EXECUTE FUNCTION refuse_mutation();

-- A threshold is crossed once per period: the unique key makes concurrent evaluations record it once.
-- The other columns are snapshots at the crossing.
CREATE TABLE billing_alerts (
  id                uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  tenant_id         uuid NOT NULL REFERENCES tenants (id),
  period_key        text NOT NULL CHECK (period_key ~ '^[0-9]{4}-(0[1-9]|1[0-2])$'),
  threshold_pct     integer NOT NULL CHECK (threshold_pct BETWEEN 1 AND 100),
  scheme            text NOT NULL CHECK (scheme IN ('prepaid', 'postpaid', 'subscription')),
  enforcement_mode  text CHECK (enforcement_mode IN ('graduated', 'hard_block')),
  spent_usd         numeric(14, 4) NOT NULL CHECK (spent_usd >= 0),
  limit_usd         numeric(14, 4) NOT NULL CHECK (limit_usd > 0),
  crossed_at        timestamptz(3) NOT NULL DEFAULT clock_timestamp(),
  UNIQUE (tenant_id, period_key, threshold_pct)
);
CREATE INDEX billing_alerts_page_idx ON billing_alerts (tenant_id, period_key, crossed_at DESC);
CREATE TRIGGER billing_alerts_no_update BEFORE UPDATE ON billing_alerts FOR EACH ROW EXECUTE FUNCTION refuse_mutation();
CREATE TRIGGER billing_alerts_no_delete BEFORE DELETE ON billing_alerts FOR EACH ROW EXECUTE FUNCTION refuse_mutation();
CREATE TRIGGER billing_alerts_no_truncate BEFORE TRUNCATE ON billing_alerts FOR EACH STATEMENT EXECUTE FUNCTION refuse_mutation();

DO $$
DECLARE t text;
BEGIN
  FOREACH t IN ARRAY ARRAY['billing_accounts', 'billing_ledger', 'billing_alerts']
  LOOP
    EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', t);
    EXECUTE format('ALTER TABLE %I FORCE ROW LEVEL SECURITY', t);
    EXECUTE format('CREATE POLICY tenant_isolation ON %I USING (tenant_id = app_tenant_id()) WITH CHECK (tenant_id = app_tenant_id())', t);
  END LOOP;
END $$;

GRANT SELECT, INSERT, UPDATE ON billing_accounts TO dialer_app;
GRANT SELECT, INSERT ON billing_ledger, billing_alerts TO dialer_app;

-- The periodic enforcement pass runs for every tenant with billing on before it knows whose
-- accounts they are: a narrow SECURITY DEFINER listing that answers only tenant ids.
CREATE FUNCTION billing_enabled_tenants()
  RETURNS TABLE (tenant_id uuid)
  LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp
  AS $$ SELECT a.tenant_id FROM billing_accounts a WHERE a.scheme IS NOT NULL ORDER BY a.tenant_id $$;

REVOKE ALL ON FUNCTION billing_enabled_tenants() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION billing_enabled_tenants() TO dialer_app;
