-- Voice AI agents, their conversations and metering. Issue 9.

-- The tenant-wide kill switch: while set, no new AI call starts and live AI calls are handed off or ended.
ALTER TABLE tenants ADD COLUMN ai_paused_at timestamptz(3);
ALTER TABLE tenants ADD COLUMN ai_paused_reason text CHECK (length(ai_paused_reason) <= 500);

CREATE TABLE ai_agents (
  id                uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  tenant_id         uuid NOT NULL REFERENCES tenants (id),
  name              text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
  status            text NOT NULL DEFAULT 'draft' CHECK (status IN ('draft', 'live', 'paused', 'retired')),
  voice             jsonb NOT NULL,
  disclosure_text   text NOT NULL CHECK (octet_length(disclosure_text) BETWEEN 1 AND 10000),
  -- True once the agent has been live; the disclosure text is then immutable (trigger below).
  disclosure_locked boolean NOT NULL DEFAULT false,
  policy            jsonb NOT NULL,
  handoff_rules     jsonb NOT NULL,
  policy_version    integer NOT NULL DEFAULT 1 CHECK (policy_version >= 1),
  first_live_at     timestamptz(3),
  retired_at        timestamptz(3),
  created_at        timestamptz(3) NOT NULL DEFAULT now(),
  updated_at        timestamptz(3) NOT NULL DEFAULT now()
);
-- Names are unique per tenant among agents not retired (a retired name can be reused).
CREATE UNIQUE INDEX ai_agents_name_key ON ai_agents (tenant_id, lower(name)) WHERE status <> 'retired';
CREATE INDEX ai_agents_tenant_idx ON ai_agents (tenant_id, created_at, id);
CREATE TRIGGER ai_agents_updated_at BEFORE UPDATE ON ai_agents FOR EACH ROW EXECUTE FUNCTION set_updated_at();

-- Whatever the application does: a locked disclosure never changes, a lock never opens, and the
-- policy version never goes backwards.
CREATE FUNCTION ai_agents_guard() RETURNS trigger
  LANGUAGE plpgsql
  AS $$ BEGIN
    IF OLD.disclosure_locked AND NEW.disclosure_text IS DISTINCT FROM OLD.disclosure_text THEN
      RAISE EXCEPTION 'the disclosure of AI agent % is locked', OLD.id USING ERRCODE = 'check_violation';
    END IF;
    IF OLD.disclosure_locked AND NOT NEW.disclosure_locked THEN
      RAISE EXCEPTION 'the disclosure lock of AI agent % cannot be released', OLD.id USING ERRCODE = 'check_violation';
    END IF;
    IF NEW.policy_version < OLD.policy_version THEN
      RAISE EXCEPTION 'policy_version of AI agent % cannot decrease', OLD.id USING ERRCODE = 'check_violation';
    END IF;
    RETURN NEW;
  END $$;
CREATE TRIGGER ai_agents_guard BEFORE UPDATE ON ai_agents FOR EACH ROW EXECUTE FUNCTION ai_agents_guard();

-- Every policy version of an agent as it was: append-only evidence of what the AI was allowed to say.
CREATE TABLE ai_agent_versions (
  id             uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  tenant_id      uuid NOT NULL REFERENCES tenants (id),
  ai_agent_id    uuid NOT NULL REFERENCES ai_agents (id),
  policy_version integer NOT NULL,
  snapshot       jsonb NOT NULL,
  actor          text,
  created_at     timestamptz(3) NOT NULL DEFAULT now(),
  UNIQUE (ai_agent_id, policy_version)
);
CREATE TRIGGER ai_agent_versions_append_only BEFORE UPDATE OR DELETE ON ai_agent_versions
  FOR EACH ROW EXECUTE FUNCTION refuse_mutation();

-- The AI agent that speaks on an ai_voice campaign.
ALTER TABLE campaigns ADD COLUMN ai_agent_id uuid REFERENCES ai_agents (id);

CREATE TABLE ai_conversations (
  id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  tenant_id       uuid NOT NULL REFERENCES tenants (id),
  ai_agent_id     uuid NOT NULL REFERENCES ai_agents (id),
  policy_version  integer NOT NULL,
  kind            text NOT NULL CHECK (kind IN ('call', 'sandbox')),
  call_attempt_id uuid REFERENCES call_attempts (id),
  call_uuid       text,
  campaign_id     uuid REFERENCES campaigns (id),
  debt_id         uuid REFERENCES debts (id),
  status          text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'ended', 'taken_over')),
  outcome         text,
  transcript      jsonb NOT NULL DEFAULT '[]'::jsonb,
  events          jsonb NOT NULL DEFAULT '[]'::jsonb,
  engine_state    jsonb,
  taken_over_by   text,
  taken_over_at   timestamptz(3),
  started_at      timestamptz(3) NOT NULL DEFAULT now(),
  ended_at        timestamptz(3),
  created_at      timestamptz(3) NOT NULL DEFAULT now(),
  updated_at      timestamptz(3) NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX ai_conversations_call_key ON ai_conversations (tenant_id, call_uuid) WHERE call_uuid IS NOT NULL;
CREATE INDEX ai_conversations_page_idx ON ai_conversations (tenant_id, started_at DESC, id DESC);
CREATE INDEX ai_conversations_live_idx ON ai_conversations (tenant_id) WHERE status = 'active';
CREATE TRIGGER ai_conversations_updated_at BEFORE UPDATE ON ai_conversations FOR EACH ROW EXECUTE FUNCTION set_updated_at();

-- One metered row per answered AI call, billed once per call uuid at the rate in force when metered.
CREATE TABLE ai_usage (
  id               uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  tenant_id        uuid NOT NULL REFERENCES tenants (id),
  call_uuid        text NOT NULL,
  call_attempt_id  uuid REFERENCES call_attempts (id),
  campaign_id      uuid REFERENCES campaigns (id),
  ai_agent_id      uuid REFERENCES ai_agents (id),
  answered_at      timestamptz(3) NOT NULL,
  ended_at         timestamptz(3) NOT NULL,
  billable_seconds integer NOT NULL CHECK (billable_seconds >= 0),
  minute_rate_usd  numeric(10, 4) NOT NULL CHECK (minute_rate_usd >= 0),
  cost_usd         numeric(14, 4) NOT NULL CHECK (cost_usd >= 0),
  metered_at       timestamptz(3) NOT NULL DEFAULT now(),
  UNIQUE (tenant_id, call_uuid)
);
CREATE INDEX ai_usage_window_idx ON ai_usage (tenant_id, answered_at);
CREATE TRIGGER ai_usage_append_only BEFORE UPDATE OR DELETE ON ai_usage
  FOR EACH ROW EXECUTE FUNCTION refuse_mutation();

DO $$
DECLARE t text;
BEGIN
  FOREACH t IN ARRAY ARRAY['ai_agents', 'ai_agent_versions', 'ai_conversations', 'ai_usage']
  LOOP
    EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', t);
    EXECUTE format('ALTER TABLE %I FORCE ROW LEVEL SECURITY', t);
    EXECUTE format('CREATE POLICY tenant_isolation ON %I USING (tenant_id = app_tenant_id()) '
                   'WITH CHECK (tenant_id = app_tenant_id())', t);
  END LOOP;
END $$;

GRANT SELECT, INSERT, UPDATE ON ai_agents, ai_conversations TO dialer_app;
GRANT SELECT, INSERT ON ai_agent_versions, ai_usage TO dialer_app;
