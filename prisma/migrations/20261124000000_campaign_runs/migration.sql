-- The campaign run: key presses of IVR, TTS and survey calls, and the indexes the dial loop's
-- capacity and in-flight queries read.

-- One row per key the consumer pressed on a campaign call. Appended by the call session (the
-- workflow that follows one call), read by GET /v1/campaigns/{id}/survey-results. Append-only.
CREATE TABLE call_keypresses (
  id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  tenant_id       uuid NOT NULL REFERENCES tenants (id),
  campaign_id     uuid REFERENCES campaigns (id),
  call_attempt_id uuid NOT NULL REFERENCES call_attempts (id),
  call_uuid       text NOT NULL,
  -- Position of the press within the call (0-based): with call_uuid the idempotency key, so a
  -- replayed event never counts twice.
  seq             integer NOT NULL CHECK (seq >= 0),
  digit           text NOT NULL CHECK (digit ~ '^[0-9*#]$'),
  -- Keys leading to the menu the key was pressed in ('' = the root menu or a flat map).
  menu_path       text NOT NULL DEFAULT '' CHECK (menu_path ~ '^[0-9*#]{0,5}$'),
  -- What the menu did with it: transfer_agent, optout, hangup, submenu, or null (no entry).
  action          text CHECK (action IN ('transfer_agent', 'optout', 'hangup', 'submenu')),
  pressed_at      timestamptz(3) NOT NULL,
  inserted_at     timestamptz(3) NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX call_keypresses_key ON call_keypresses (tenant_id, call_uuid, seq);
CREATE INDEX call_keypresses_campaign_idx ON call_keypresses (tenant_id, campaign_id, pressed_at);
CREATE TRIGGER call_keypresses_no_update BEFORE UPDATE ON call_keypresses FOR EACH ROW EXECUTE FUNCTION refuse_mutation();
CREATE TRIGGER call_keypresses_no_delete BEFORE DELETE ON call_keypresses FOR EACH ROW EXECUTE FUNCTION refuse_mutation();
CREATE TRIGGER call_keypresses_no_truncate BEFORE TRUNCATE ON call_keypresses FOR EACH STATEMENT EXECUTE FUNCTION refuse_mutation();

ALTER TABLE call_keypresses ENABLE ROW LEVEL SECURITY;
ALTER TABLE call_keypresses FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON call_keypresses USING (tenant_id = app_tenant_id()) WITH CHECK (tenant_id = app_tenant_id());
GRANT SELECT, INSERT ON call_keypresses TO dialer_app;

-- Calls in flight (originals without a final correction) and dials in the last second are read
-- every tick, tenant-wide, under the tenant's dial lock.
CREATE INDEX call_attempts_started_idx ON call_attempts (tenant_id, started_at) WHERE corrects_id IS NULL;
CREATE INDEX call_attempts_campaign_started_idx ON call_attempts (tenant_id, campaign_id, started_at) WHERE corrects_id IS NULL;
-- The per-number cool-down of lead selection looks up recent calls to a number.
CREATE INDEX call_attempts_number_idx ON call_attempts (tenant_id, to_number, started_at) WHERE corrects_id IS NULL;

-- The call an agent is connected to, set when the dial loop bridges the agent and cleared when the
-- call's final row is written (by its session or by the reaper), so an agent whose call lost its
-- hangup event is not held on_call forever.
ALTER TABLE agents ADD COLUMN active_call_attempt_id uuid REFERENCES call_attempts (id);

-- A due callback the compliance engine refused rests until retry_at (blocked_cooldown_ms), like a
-- refused lead, instead of being decided again every tick.
ALTER TABLE callbacks ADD COLUMN retry_at timestamptz(3);
