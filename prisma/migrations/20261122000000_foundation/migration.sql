-- Foundation: tenancy, identity, audit chain, rate-limit counters.
-- Runs as dialer_owner (the migrator does SET ROLE). dialer_app, the role the API and workers
-- use, owns nothing, has no BYPASSRLS and receives only the grants written here.

-- The tenant of the current transaction, set by withTenant() with set_config(..., true).
-- NULLIF keeps an unset or reset setting from failing the cast: no tenant means no rows.
CREATE FUNCTION app_tenant_id() RETURNS uuid
  LANGUAGE sql STABLE PARALLEL SAFE
  AS $$ SELECT NULLIF(current_setting('app.tenant_id', true), '')::uuid $$;

CREATE FUNCTION set_updated_at() RETURNS trigger
  LANGUAGE plpgsql
  AS $$ BEGIN NEW.updated_at := now(); RETURN NEW; END $$;

-- Refuses UPDATE, DELETE and TRUNCATE on evidence tables, whoever the caller is.
CREATE FUNCTION refuse_mutation() RETURNS trigger
  LANGUAGE plpgsql
  AS $$ BEGIN
    RAISE EXCEPTION '% on % is not allowed: the table is append-only', TG_OP, TG_TABLE_NAME
      USING ERRCODE = 'insufficient_privilege';
  END $$;

-- ---------------------------------------------------------------------------------------------
CREATE TABLE tenants (
  id                      uuid PRIMARY KEY,
  account_id              uuid NOT NULL,
  name                    text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
  status                  text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'suspended')),
  retention_months        integer NOT NULL DEFAULT 24 CHECK (retention_months BETWEEN 1 AND 240),
  seats                   integer NOT NULL DEFAULT 3 CHECK (seats BETWEEN 0 AND 100000),
  tier                    text NOT NULL DEFAULT 'starter' CHECK (tier IN
                            ('starter', 'growth', 'scale', 'enterprise', 'dialer_core', 'compliance_pro', 'audit_shield')),
  voice_ai_enabled        boolean NOT NULL DEFAULT false,
  ai_monthly_budget_usd   numeric(14, 2) CHECK (ai_monthly_budget_usd >= 0),
  ai_max_call_seconds     integer CHECK (ai_max_call_seconds > 0),
  sms_monthly_budget_usd  numeric(14, 2) CHECK (sms_monthly_budget_usd >= 0),
  human_initiated_enabled boolean NOT NULL DEFAULT false,
  max_cps                 integer CHECK (max_cps > 0),
  max_concurrent_channels integer CHECK (max_concurrent_channels > 0),
  abandon_seller_name     text,
  abandon_seller_phone    text,
  tax_country             text,
  tax_region              text,
  tax_postal_code         text,
  suspended_at            timestamptz(3),
  created_at              timestamptz(3) NOT NULL DEFAULT now(),
  updated_at              timestamptz(3) NOT NULL DEFAULT now()
);
-- Tenant names are unique platform-wide, case-insensitively (admin create answers 409).
CREATE UNIQUE INDEX tenants_name_key ON tenants (lower(name));
CREATE TRIGGER tenants_updated_at BEFORE UPDATE ON tenants FOR EACH ROW EXECUTE FUNCTION set_updated_at();

CREATE TABLE users (
  id                  uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  tenant_id           uuid NOT NULL REFERENCES tenants (id),
  email               text NOT NULL CHECK (email = lower(email)),
  name                text NOT NULL DEFAULT '',
  status              text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'disabled')),
  role                text NOT NULL DEFAULT 'member' CHECK (role IN ('member', 'account_admin')),
  password_hash       text NOT NULL,
  password_updated_at timestamptz(3) NOT NULL DEFAULT now(),
  last_login_at       timestamptz(3),
  created_at          timestamptz(3) NOT NULL DEFAULT now(),
  updated_at          timestamptz(3) NOT NULL DEFAULT now()
);
-- Global login identifier: unique across tenants.
CREATE UNIQUE INDEX users_email_key ON users (email);
CREATE INDEX users_tenant_idx ON users (tenant_id, created_at, id);
CREATE TRIGGER users_updated_at BEFORE UPDATE ON users FOR EACH ROW EXECUTE FUNCTION set_updated_at();

CREATE TABLE user_sessions (
  id         uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  tenant_id  uuid NOT NULL REFERENCES tenants (id),
  user_id    uuid NOT NULL REFERENCES users (id),
  token_hash text NOT NULL UNIQUE,
  expires_at timestamptz(3) NOT NULL,
  revoked_at timestamptz(3),
  created_at timestamptz(3) NOT NULL DEFAULT now()
);
CREATE INDEX user_sessions_user_idx ON user_sessions (tenant_id, user_id) WHERE revoked_at IS NULL;

CREATE TABLE api_keys (
  id         uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  tenant_id  uuid NOT NULL REFERENCES tenants (id),
  label      text NOT NULL DEFAULT '',
  token_hash text NOT NULL UNIQUE,
  revoked_at timestamptz(3),
  created_at timestamptz(3) NOT NULL DEFAULT now()
);
CREATE INDEX api_keys_tenant_idx ON api_keys (tenant_id, created_at, id);

CREATE TABLE agents (
  id            uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  tenant_id     uuid NOT NULL REFERENCES tenants (id),
  name          text NOT NULL,
  email         text NOT NULL,
  role          text NOT NULL DEFAULT 'agent' CHECK (role IN ('agent', 'supervisor', 'admin')),
  status        text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'inactive')),
  sip_extension text CHECK (sip_extension ~ '^[A-Za-z0-9._-]{1,64}$'),
  device_mode   text NOT NULL DEFAULT 'browser' CHECK (device_mode IN ('browser', 'external')),
  presence      text NOT NULL DEFAULT 'offline'
                  CHECK (presence IN ('offline', 'available', 'ringing', 'on_call', 'wrap_up', 'paused')),
  created_at    timestamptz(3) NOT NULL DEFAULT now(),
  updated_at    timestamptz(3) NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX agents_email_key ON agents (tenant_id, lower(email));
CREATE UNIQUE INDEX agents_extension_key ON agents (tenant_id, sip_extension) WHERE sip_extension IS NOT NULL;
CREATE TRIGGER agents_updated_at BEFORE UPDATE ON agents FOR EACH ROW EXECUTE FUNCTION set_updated_at();

CREATE TABLE password_reset_tokens (
  id            uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  tenant_id     uuid NOT NULL REFERENCES tenants (id),
  user_id       uuid NOT NULL REFERENCES users (id),
  token_hash    text NOT NULL UNIQUE,
  expires_at    timestamptz(3) NOT NULL,
  used_at       timestamptz(3),
  superseded_at timestamptz(3),
  created_at    timestamptz(3) NOT NULL DEFAULT now()
);
CREATE INDEX password_reset_tokens_live_idx ON password_reset_tokens (tenant_id, user_id)
  WHERE used_at IS NULL AND superseded_at IS NULL;

-- Mail that could not go through SMTP (none configured). The body holds a one-shot link, so it
-- is encrypted at rest with the application key.
CREATE TABLE mail_outbox (
  id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  tenant_id       uuid NOT NULL REFERENCES tenants (id),
  to_address      text NOT NULL,
  subject         text NOT NULL,
  body_ciphertext text NOT NULL,
  kind            text NOT NULL,
  created_at      timestamptz(3) NOT NULL DEFAULT now()
);
CREATE INDEX mail_outbox_tenant_idx ON mail_outbox (tenant_id, created_at);

-- ---------------------------------------------------------------------------------------------
-- Hash-chained audit log. The chain is computed in the database so no writer can skip a link:
-- hash = sha256(canonical text). The canonical text encodes every field as <UTF-8 byte length>:<text>;
-- (NULL as N;), so no two different rows share a text. The payload enters as the SHA-256 of its
-- jsonb text (deterministic for a given value): a proof can show a link of the chain without
-- disclosing that link's payload. src/lib/audit.ts mirrors it for independent verification.
-- Each tenant's log is 16 independent chains ("lanes"): appends serialize per lane, not per
-- tenant, so unrelated facts are recorded in parallel. The lane is fixed by the subject
-- (audit_lane), so every entry about one subject is in one lane and a proof about a debt walks
-- one lane only.
CREATE TABLE audit_log (
  id           uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  tenant_id    uuid NOT NULL REFERENCES tenants (id),
  lane         smallint NOT NULL DEFAULT 0 CHECK (lane BETWEEN 0 AND 15),
  seq          bigint NOT NULL,
  occurred_at  timestamptz(3) NOT NULL DEFAULT now(),
  actor_type   text NOT NULL,
  actor_id     text,
  action       text NOT NULL,
  subject_type text,
  subject_id   text,
  payload      jsonb NOT NULL DEFAULT '{}'::jsonb,
  prev_hash    text NOT NULL,
  hash         text NOT NULL,
  UNIQUE (tenant_id, lane, seq)
);
CREATE INDEX audit_log_subject_idx ON audit_log (tenant_id, subject_type, subject_id);

CREATE FUNCTION audit_field(p_value text) RETURNS text
  LANGUAGE sql IMMUTABLE
  AS $$ SELECT CASE WHEN p_value IS NULL THEN 'N;' ELSE octet_length(p_value)::text || ':' || p_value || ';' END $$;

-- md5 only spreads subjects over lanes (stable across PostgreSQL versions, unlike hashtext).
CREATE FUNCTION audit_lane(p_subject_type text, p_subject_id text) RETURNS smallint
  LANGUAGE sql IMMUTABLE
  AS $$ SELECT (('x' || substr(md5(coalesce(p_subject_type, '') || ':' || coalesce(p_subject_id, '')), 1, 8))::bit(32)::int & 15)::smallint $$;

CREATE FUNCTION audit_log_canonical(
  p_tenant_id uuid, p_lane smallint, p_seq bigint, p_prev_hash text, p_occurred_at timestamptz, p_actor_type text,
  p_actor_id text, p_action text, p_subject_type text, p_subject_id text, p_payload jsonb
) RETURNS text
  LANGUAGE sql IMMUTABLE
  AS $$
    SELECT 'audit-v1;' || audit_field(p_tenant_id::text) || audit_field(p_lane::text) || audit_field(p_seq::text)
      || audit_field(p_prev_hash)
      || audit_field(to_char(p_occurred_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))
      || audit_field(p_actor_type) || audit_field(p_actor_id) || audit_field(p_action)
      || audit_field(p_subject_type) || audit_field(p_subject_id)
      || audit_field(encode(sha256(convert_to(p_payload::text, 'UTF8')), 'hex'))
  $$;

CREATE FUNCTION audit_log_chain() RETURNS trigger
  LANGUAGE plpgsql
  AS $$
  DECLARE
    last_seq  bigint;
    last_hash text;
  BEGIN
    NEW.lane := audit_lane(NEW.subject_type, NEW.subject_id);
    -- One writer per lane at a time; held to the end of the transaction.
    PERFORM pg_advisory_xact_lock(hashtextextended('audit_log:' || NEW.tenant_id::text || ':' || NEW.lane::text, 0));
    SELECT seq, hash INTO last_seq, last_hash
      FROM audit_log WHERE tenant_id = NEW.tenant_id AND lane = NEW.lane ORDER BY seq DESC LIMIT 1;
    NEW.seq := coalesce(last_seq, 0) + 1;
    NEW.prev_hash := coalesce(last_hash, repeat('0', 64));
    NEW.occurred_at := date_trunc('milliseconds', coalesce(NEW.occurred_at, now()));
    NEW.hash := encode(sha256(convert_to(audit_log_canonical(
      NEW.tenant_id, NEW.lane, NEW.seq, NEW.prev_hash, NEW.occurred_at, NEW.actor_type, NEW.actor_id,
      NEW.action, NEW.subject_type, NEW.subject_id, NEW.payload), 'UTF8')), 'hex');
    RETURN NEW;
  END $$;

CREATE TRIGGER audit_log_chain BEFORE INSERT ON audit_log FOR EACH ROW EXECUTE FUNCTION audit_log_chain();
CREATE TRIGGER audit_log_append_only BEFORE UPDATE OR DELETE ON audit_log
  FOR EACH ROW EXECUTE FUNCTION refuse_mutation();
CREATE TRIGGER audit_log_no_truncate BEFORE TRUNCATE ON audit_log
  FOR EACH STATEMENT EXECUTE FUNCTION refuse_mutation();

-- ---------------------------------------------------------------------------------------------
-- Fixed-window counters (rate-limiter-flexible's PostgreSQL layout). Keys are sha256 digests, so
-- no email or address is stored. Shared by every API process.
CREATE TABLE rate_limits (
  key    varchar(255) PRIMARY KEY,
  points integer NOT NULL DEFAULT 0,
  expire bigint
);

-- ---------------------------------------------------------------------------------------------
-- Row-level security on every tenant-owned table.
ALTER TABLE tenants ENABLE ROW LEVEL SECURITY;
ALTER TABLE tenants FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON tenants
  USING (id = app_tenant_id()) WITH CHECK (id = app_tenant_id());

DO $$
DECLARE t text;
BEGIN
  FOREACH t IN ARRAY ARRAY['users', 'user_sessions', 'api_keys', 'agents', 'password_reset_tokens',
                           'mail_outbox', 'audit_log']
  LOOP
    EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', t);
    EXECUTE format('ALTER TABLE %I FORCE ROW LEVEL SECURITY', t);
    EXECUTE format('CREATE POLICY tenant_isolation ON %I USING (tenant_id = app_tenant_id()) '
                   'WITH CHECK (tenant_id = app_tenant_id())', t);
  END LOOP;
END $$;

-- ---------------------------------------------------------------------------------------------
-- Credential resolution happens before the tenant is known, so these narrow SECURITY DEFINER
-- lookups (owned by dialer_owner, which bypasses RLS) answer only "whose token is this".
CREATE FUNCTION auth_resolve_api_key(p_token_hash text)
  RETURNS TABLE (api_key_id uuid, tenant_id uuid, tenant_status text)
  LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp
  AS $$
    SELECT k.id, k.tenant_id, t.status
      FROM api_keys k JOIN tenants t ON t.id = k.tenant_id
     WHERE k.token_hash = p_token_hash AND k.revoked_at IS NULL
  $$;

CREATE FUNCTION auth_resolve_session(p_token_hash text)
  RETURNS TABLE (session_id uuid, user_id uuid, tenant_id uuid, tenant_status text, expires_at timestamptz)
  LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp
  AS $$
    SELECT s.id, s.user_id, s.tenant_id, t.status, s.expires_at
      FROM user_sessions s
      JOIN users u ON u.id = s.user_id
      JOIN tenants t ON t.id = s.tenant_id
     WHERE s.token_hash = p_token_hash AND s.revoked_at IS NULL AND s.expires_at > now()
       AND u.status = 'active'
  $$;

CREATE FUNCTION auth_user_by_email(p_email text)
  RETURNS TABLE (user_id uuid, tenant_id uuid, password_hash text, user_status text, tenant_status text)
  LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp
  AS $$
    SELECT u.id, u.tenant_id, u.password_hash, u.status, t.status
      FROM users u JOIN tenants t ON t.id = u.tenant_id
     WHERE u.email = lower(p_email)
  $$;

CREATE FUNCTION auth_resolve_reset_token(p_token_hash text)
  RETURNS TABLE (token_id uuid, user_id uuid, tenant_id uuid)
  LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp
  AS $$
    SELECT r.id, r.user_id, r.tenant_id
      FROM password_reset_tokens r
     WHERE r.token_hash = p_token_hash AND r.used_at IS NULL AND r.superseded_at IS NULL
       AND r.expires_at > now()
  $$;

REVOKE ALL ON FUNCTION auth_resolve_api_key(text), auth_resolve_session(text), auth_user_by_email(text),
  auth_resolve_reset_token(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION auth_resolve_api_key(text), auth_resolve_session(text), auth_user_by_email(text),
  auth_resolve_reset_token(text) TO dialer_app;

-- ---------------------------------------------------------------------------------------------
-- Grants. Evidence rows are never deleted, so no DELETE anywhere but the counters.
GRANT USAGE ON SCHEMA public TO dialer_app;
GRANT SELECT, INSERT, UPDATE ON tenants, users, user_sessions, api_keys, agents, password_reset_tokens
  TO dialer_app;
GRANT SELECT, INSERT ON mail_outbox, audit_log TO dialer_app;
GRANT SELECT, INSERT, UPDATE, DELETE ON rate_limits TO dialer_app;
