-- Agents, seats and widgets; supervision. Issue 7.

-- The tenant's wrap-up cap: 0 = a seat goes straight back to available at hangup; above 0 the
-- seat enters wrap_up and a durable timer ends it after this many seconds. Set by the operator.
ALTER TABLE tenants ADD COLUMN agent_wrap_up_seconds integer NOT NULL DEFAULT 0
  CHECK (agent_wrap_up_seconds BETWEEN 0 AND 3600);
-- The plan the supervision eavesdrop modes read (402 plan_inactive when not active). Billing
-- (issue 10) owns its transitions; the operator sets it until then.
ALTER TABLE tenants ADD COLUMN plan_status text NOT NULL DEFAULT 'active'
  CHECK (plan_status IN ('active', 'trialing', 'past_due', 'suspended', 'cancelled'));

-- Widget login: PBKDF2 hash of the agent's widget password (login_enabled iff set).
ALTER TABLE agents ADD COLUMN login_password_hash text;
ALTER TABLE agents ADD COLUMN login_password_set_at timestamptz(3);
-- When the current wrap-up ends: the durable timer moves wrap_up → available only while this
-- value is the one it was started for, so a stale timer never ends a newer wrap-up.
ALTER TABLE agents ADD COLUMN wrap_up_until timestamptz(3);

-- Embed origins of the widget. An enabled origin belongs to one tenant platform-wide: agent login
-- and widget-config resolve the tenant from the request's Origin.
CREATE TABLE widget_origins (
  id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  tenant_id   uuid NOT NULL REFERENCES tenants (id),
  origin      text NOT NULL CHECK (origin ~ '^https?://[a-z0-9.-]+(:[0-9]{1,5})?$'),
  label       text NOT NULL DEFAULT '' CHECK (length(label) <= 200),
  enabled     boolean NOT NULL DEFAULT true,
  disabled_at timestamptz(3),
  created_at  timestamptz(3) NOT NULL DEFAULT now(),
  updated_at  timestamptz(3) NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX widget_origins_tenant_origin_key ON widget_origins (tenant_id, origin);
CREATE UNIQUE INDEX widget_origins_enabled_origin_key ON widget_origins (origin) WHERE enabled;
CREATE TRIGGER widget_origins_updated_at BEFORE UPDATE ON widget_origins FOR EACH ROW EXECUTE FUNCTION set_updated_at();

-- Browser tokens (ddw_), bound to one agent; sha256 at rest; revoked, never deleted.
CREATE TABLE widget_tokens (
  id                 uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  tenant_id          uuid NOT NULL REFERENCES tenants (id),
  agent_id           uuid NOT NULL REFERENCES agents (id),
  label              text NOT NULL DEFAULT '' CHECK (length(label) <= 200),
  allowed_origin_id  uuid REFERENCES widget_origins (id),
  token_hash         text NOT NULL UNIQUE,
  issued_via         text NOT NULL CHECK (issued_via IN ('tenant', 'agent_login')),
  expires_at         timestamptz(3) NOT NULL,
  session_expires_at timestamptz(3) NOT NULL,
  revoked_at         timestamptz(3),
  revoked_reason     text,
  last_used_at       timestamptz(3),
  created_at         timestamptz(3) NOT NULL DEFAULT now(),
  updated_at         timestamptz(3) NOT NULL DEFAULT now(),
  CHECK (expires_at <= session_expires_at)
);
CREATE INDEX widget_tokens_agent_live_idx ON widget_tokens (tenant_id, agent_id) WHERE revoked_at IS NULL;
CREATE INDEX widget_tokens_tenant_idx ON widget_tokens (tenant_id, created_at, id);
CREATE TRIGGER widget_tokens_updated_at BEFORE UPDATE ON widget_tokens FOR EACH ROW EXECUTE FUNCTION set_updated_at();

-- Ephemeral SIP credentials of the browser softphone, issued at check-in. The switch reads its
-- directory from here (and caches it for at most the 24 h autoexpiry); the password is encrypted
-- with the application key.
CREATE TABLE agent_sip_credentials (
  id                  uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  tenant_id           uuid NOT NULL REFERENCES tenants (id),
  agent_id            uuid NOT NULL REFERENCES agents (id),
  username            text NOT NULL,
  password_ciphertext text NOT NULL,
  expires_at          timestamptz(3) NOT NULL,
  revoked_at          timestamptz(3),
  revoked_reason      text,
  created_at          timestamptz(3) NOT NULL DEFAULT now()
);
CREATE INDEX agent_sip_credentials_live_idx ON agent_sip_credentials (tenant_id, agent_id) WHERE revoked_at IS NULL;
CREATE UNIQUE INDEX agent_sip_credentials_username_key ON agent_sip_credentials (username);

-- Planned shifts: when a seat is expected on the floor (workforce planning; the dial loop does not
-- read them).
CREATE TABLE planned_shifts (
  id         uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  tenant_id  uuid NOT NULL REFERENCES tenants (id),
  agent_id   uuid NOT NULL REFERENCES agents (id),
  starts_at  timestamptz(3) NOT NULL,
  ends_at    timestamptz(3) NOT NULL,
  note       text NOT NULL DEFAULT '' CHECK (length(note) <= 500),
  status     text NOT NULL DEFAULT 'scheduled' CHECK (status IN ('scheduled', 'cancelled')),
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  updated_at timestamptz(3) NOT NULL DEFAULT now(),
  CHECK (ends_at > starts_at)
);
CREATE INDEX planned_shifts_tenant_idx ON planned_shifts (tenant_id, starts_at, id);
CREATE INDEX planned_shifts_agent_idx ON planned_shifts (tenant_id, agent_id, starts_at);
CREATE TRIGGER planned_shifts_updated_at BEFORE UPDATE ON planned_shifts FOR EACH ROW EXECUTE FUNCTION set_updated_at();

-- Supervision sessions: one row per (call, supervisor, mode) attempt. A pending or active row holds
-- one slot of the tenant's supervision quota; at most one per supervisor per call.
CREATE TABLE supervision_sessions (
  id                  uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  tenant_id           uuid NOT NULL REFERENCES tenants (id),
  call_attempt_id     uuid NOT NULL REFERENCES call_attempts (id),
  call_uuid           text NOT NULL,
  supervisor_agent_id uuid NOT NULL REFERENCES agents (id),
  supervisor_ext      text NOT NULL,
  mode                text NOT NULL CHECK (mode IN ('listen', 'whisper', 'barge', 'takeover')),
  status              text NOT NULL CHECK (status IN ('pending', 'active', 'ended', 'failed')),
  leg_uuid            text,
  end_reason          text,
  started_at          timestamptz(3) NOT NULL DEFAULT now(),
  ended_at            timestamptz(3),
  created_at          timestamptz(3) NOT NULL DEFAULT now(),
  updated_at          timestamptz(3) NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX supervision_sessions_one_live_key ON supervision_sessions (tenant_id, call_uuid, supervisor_agent_id)
  WHERE status IN ('pending', 'active');
CREATE INDEX supervision_sessions_live_idx ON supervision_sessions (tenant_id) WHERE status IN ('pending', 'active');
CREATE INDEX supervision_sessions_call_idx ON supervision_sessions (tenant_id, call_attempt_id);
CREATE TRIGGER supervision_sessions_updated_at BEFORE UPDATE ON supervision_sessions FOR EACH ROW EXECUTE FUNCTION set_updated_at();

DO $$
DECLARE t text;
BEGIN
  FOREACH t IN ARRAY ARRAY['widget_origins', 'widget_tokens', 'agent_sip_credentials', 'planned_shifts', 'supervision_sessions']
  LOOP
    EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', t);
    EXECUTE format('ALTER TABLE %I FORCE ROW LEVEL SECURITY', t);
    EXECUTE format('CREATE POLICY tenant_isolation ON %I USING (tenant_id = app_tenant_id()) '
                   'WITH CHECK (tenant_id = app_tenant_id())', t);
  END LOOP;
END $$;

GRANT SELECT, INSERT, UPDATE ON widget_origins, widget_tokens, agent_sip_credentials, planned_shifts, supervision_sessions
  TO dialer_app;

-- A ddw_ bearer resolves before its tenant is known: this narrow SECURITY DEFINER lookup answers
-- only "whose live token is this" (unrevoked, unexpired, its agent active) and stamps last_used_at
-- at most once a minute so a busy widget does not write on every request.
CREATE FUNCTION auth_resolve_widget_token(p_token_hash text)
  RETURNS TABLE (widget_token_id uuid, agent_id uuid, tenant_id uuid, tenant_status text)
  LANGUAGE sql VOLATILE SECURITY DEFINER SET search_path = public, pg_temp
  AS $$
    WITH live AS (
      SELECT w.id, w.agent_id, w.tenant_id, t.status, w.last_used_at
        FROM widget_tokens w
        JOIN agents a ON a.id = w.agent_id
        JOIN tenants t ON t.id = w.tenant_id
       WHERE w.token_hash = p_token_hash AND w.revoked_at IS NULL
         AND w.expires_at > now() AND w.session_expires_at > now()
         AND a.status = 'active'
    ), touched AS (
      UPDATE widget_tokens w SET last_used_at = now()
        FROM live
       WHERE w.id = live.id AND (live.last_used_at IS NULL OR live.last_used_at < now() - interval '60 seconds')
    )
    SELECT id, agent_id, tenant_id, status FROM live
  $$;

-- Agent login and widget-config carry no bearer: the tenant is the one whose enabled embed origin
-- equals the request's Origin.
CREATE FUNCTION auth_tenant_by_widget_origin(p_origin text)
  RETURNS TABLE (tenant_id uuid, tenant_status text)
  LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp
  AS $$
    SELECT o.tenant_id, t.status
      FROM widget_origins o JOIN tenants t ON t.id = o.tenant_id
     WHERE o.origin = p_origin AND o.enabled
  $$;

REVOKE ALL ON FUNCTION auth_resolve_widget_token(text), auth_tenant_by_widget_origin(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION auth_resolve_widget_token(text), auth_tenant_by_widget_origin(text) TO dialer_app;
