-- Debts, contacts and the compliance engine's evidence. The campaign and CDR tables are created
-- here because the engine reads them (calling windows, attempt counts); their routes and the dial
-- loop that writes the CDR come with the campaign issue.

CREATE TABLE campaigns (
  id                               uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  tenant_id                        uuid NOT NULL REFERENCES tenants (id),
  name                             text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
  state                            text NOT NULL DEFAULT 'draft'
                                     CHECK (state IN ('draft', 'running', 'paused', 'completed', 'archived', 'suspended_balance')),
  campaign_type                    text NOT NULL DEFAULT 'predictive'
                                     CHECK (campaign_type IN ('predictive', 'progressive', 'preview', 'manual', 'tts_blast',
                                       'tts_ivr', 'ivr_cascade', 'survey', 'ai_voice', 'sms_blast')),
  sms_body                         text,
  abandonment_threshold            numeric(6, 4),
  min_dial_ratio                   numeric(6, 3),
  max_dial_ratio                   numeric(6, 3),
  calling_window_start             time(0),
  calling_window_end               time(0),
  default_timezone                 text,
  calling_window_destination_local boolean NOT NULL DEFAULT false,
  record_calls                     boolean NOT NULL DEFAULT false,
  ai_voice                         boolean NOT NULL DEFAULT false,
  amd_enabled                      boolean,
  optout_digit                     text CHECK (optout_digit ~ '^[0-9*#]$'),
  tts_prompt                       text CHECK (length(tts_prompt) <= 2000),
  ivr_menu                         jsonb NOT NULL DEFAULT '{}'::jsonb,
  deferred_bridge                  boolean NOT NULL DEFAULT false,
  consult_config                   jsonb NOT NULL DEFAULT '{}'::jsonb,
  carrier                          text,
  caller_ids                       text[] NOT NULL DEFAULT '{}',
  caller_id_pool                   uuid[] NOT NULL DEFAULT '{}',
  created_at                       timestamptz(3) NOT NULL DEFAULT now(),
  updated_at                       timestamptz(3) NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX campaigns_name_key ON campaigns (tenant_id, lower(name));
CREATE TRIGGER campaigns_updated_at BEFORE UPDATE ON campaigns FOR EACH ROW EXECUTE FUNCTION set_updated_at();

CREATE TABLE debts (
  id                   uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  tenant_id            uuid NOT NULL REFERENCES tenants (id),
  campaign_id          uuid REFERENCES campaigns (id),
  external_ref         text NOT NULL,
  consumer_ref         text NOT NULL,
  debt_type            text NOT NULL DEFAULT 'other' CHECK (debt_type IN ('other', 'student_loan')),
  account_number       text,
  amount_cents         bigint NOT NULL DEFAULT 0 CHECK (amount_cents >= 0),
  currency             text NOT NULL DEFAULT 'USD' CHECK (currency ~ '^[A-Z]{3}$'),
  state                text NOT NULL DEFAULT 'open'
                         CHECK (state IN ('open', 'in_collection', 'promise_to_pay', 'paid', 'settled', 'disputed', 'closed')),
  last_conversation_at timestamptz(3),
  next_dialable_at     timestamptz(3),
  -- Rewind watermark: attempts before it do not count for lead selection (the CDR is untouched).
  requeued_at          timestamptz(3),
  -- FDCPA 1692c(c): the consumer asked in writing that communication about this debt stop.
  cease_and_desist_at  timestamptz(3),
  created_at           timestamptz(3) NOT NULL DEFAULT now(),
  updated_at           timestamptz(3) NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX debts_external_ref_key ON debts (tenant_id, external_ref);
CREATE INDEX debts_page_idx ON debts (tenant_id, created_at, id);
CREATE INDEX debts_campaign_idx ON debts (tenant_id, campaign_id, next_dialable_at);
CREATE INDEX debts_consumer_idx ON debts (tenant_id, consumer_ref);
CREATE INDEX debts_student_loan_idx ON debts (tenant_id, account_number) WHERE debt_type = 'student_loan';
CREATE TRIGGER debts_updated_at BEFORE UPDATE ON debts FOR EACH ROW EXECUTE FUNCTION set_updated_at();

CREATE TABLE debt_contacts (
  id           uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  tenant_id    uuid NOT NULL REFERENCES tenants (id),
  debt_id      uuid NOT NULL REFERENCES debts (id),
  phone_e164   text NOT NULL CHECK (phone_e164 ~ '^\+[1-9][0-9]{6,14}$'),
  line_type    text CHECK (line_type IN ('mobile', 'landline', 'voip', 'unknown')),
  timezone     text,
  us_state     text,
  city         text,
  postal_code  text,
  consumer_ref text,
  -- Resolved from postal_code at import: the NYC per-account cap applies inside the city.
  nyc_borough  text CHECK (nyc_borough IN ('manhattan', 'brooklyn', 'queens', 'bronx', 'staten_island')),
  is_primary   boolean NOT NULL DEFAULT false,
  created_at   timestamptz(3) NOT NULL DEFAULT now(),
  updated_at   timestamptz(3) NOT NULL DEFAULT now(),
  UNIQUE (debt_id, phone_e164)
);
CREATE UNIQUE INDEX debt_contacts_one_primary ON debt_contacts (debt_id) WHERE is_primary;
CREATE INDEX debt_contacts_phone_idx ON debt_contacts (tenant_id, phone_e164);
CREATE TRIGGER debt_contacts_updated_at BEFORE UPDATE ON debt_contacts FOR EACH ROW EXECUTE FUNCTION set_updated_at();

-- Prior express consent per (debt, number, channel). An import grants it (source import, CONTRACT
-- section 5); an opt-out revokes it; a revocation is never undone by a later import.
CREATE TABLE consents (
  id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  tenant_id       uuid NOT NULL REFERENCES tenants (id),
  debt_id         uuid NOT NULL REFERENCES debts (id),
  phone_e164      text NOT NULL,
  channel         text NOT NULL CHECK (channel IN ('voice', 'sms')),
  source          text NOT NULL,
  granted_at      timestamptz(3) NOT NULL DEFAULT now(),
  evidence        jsonb NOT NULL DEFAULT '{}'::jsonb,
  revoked_at      timestamptz(3),
  revoked_source  text,
  revoked_evidence jsonb,
  updated_at      timestamptz(3) NOT NULL DEFAULT now(),
  UNIQUE (debt_id, phone_e164, channel)
);
CREATE INDEX consents_phone_idx ON consents (tenant_id, phone_e164);
CREATE TRIGGER consents_updated_at BEFORE UPDATE ON consents FOR EACH ROW EXECUTE FUNCTION set_updated_at();

-- The tenant's internal do-not-call list. A number may be listed by several sources at once; a
-- START keyword lifts only the keyword listing, never a suppression import.
CREATE TABLE dnc_entries (
  id             uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  tenant_id      uuid NOT NULL REFERENCES tenants (id),
  phone_e164     text NOT NULL CHECK (phone_e164 ~ '^\+[1-9][0-9]{6,14}$'),
  source         text NOT NULL CHECK (source IN ('suppression_import', 'optout_keyword', 'optout_digit', 'api')),
  reason         text CHECK (length(reason) <= 200),
  created_at     timestamptz(3) NOT NULL DEFAULT now(),
  removed_at     timestamptz(3),
  removed_source text
);
CREATE UNIQUE INDEX dnc_entries_active_key ON dnc_entries (tenant_id, phone_e164, source) WHERE removed_at IS NULL;

-- Tenant-imported Reassigned Numbers Database results: the latest permanent disconnection of a
-- number. Consent given before that date does not reach the number's new subscriber.
CREATE TABLE reassigned_numbers (
  id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  tenant_id       uuid NOT NULL REFERENCES tenants (id),
  phone_e164      text NOT NULL CHECK (phone_e164 ~ '^\+[1-9][0-9]{6,14}$'),
  disconnected_on date NOT NULL,
  source          text NOT NULL DEFAULT 'import',
  created_at      timestamptz(3) NOT NULL DEFAULT now(),
  UNIQUE (tenant_id, phone_e164, disconnected_on)
);

-- Calls placed by the previous system, as reported by imports (prior_attempts_7d). Each report
-- adds only what the stored history does not already hold, and is counted for seven days from
-- the report (the latest moment the calls can have happened).
CREATE TABLE debt_prior_attempts (
  id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  tenant_id   uuid NOT NULL REFERENCES tenants (id),
  debt_id     uuid NOT NULL REFERENCES debts (id),
  attempts    integer NOT NULL CHECK (attempts BETWEEN 1 AND 7),
  reported_at timestamptz(3) NOT NULL DEFAULT now()
);
CREATE INDEX debt_prior_attempts_idx ON debt_prior_attempts (tenant_id, debt_id, reported_at);

-- The CDR. Append-only: corrections are rows whose corrects_id names the original. The one
-- exception is a write-once fill of call_uuid, answered_at and from_number on an original row, from
-- NULL to a value, because the switch reports them after the attempt row must exist
-- (see call_attempts_write_once).
CREATE TABLE call_attempts (
  id                  uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  tenant_id           uuid NOT NULL REFERENCES tenants (id),
  debt_id             uuid NOT NULL REFERENCES debts (id),
  campaign_id         uuid REFERENCES campaigns (id),
  agent_id            uuid REFERENCES agents (id),
  consumer_ref        text NOT NULL,
  debt_key            text NOT NULL,
  call_uuid           text,
  from_number         text,
  to_number           text NOT NULL,
  started_at          timestamptz(3),
  answered_at         timestamptz(3),
  ended_at            timestamptz(3),
  disposition         text,
  hangup_cause        text,
  sip_response_code   integer,
  compliance_snapshot jsonb,
  amd_verdict         text,
  recording_uri       text,
  ai_used             boolean NOT NULL DEFAULT false,
  note_ciphertext     text,
  corrects_id         uuid REFERENCES call_attempts (id),
  inserted_at         timestamptz(3) NOT NULL DEFAULT now()
);
-- Frequency counting reads placed originals of a debt by time; an attempt not yet started counts
-- from its insertion.
CREATE INDEX call_attempts_debt_idx ON call_attempts (tenant_id, debt_id, (coalesce(started_at, inserted_at))) WHERE corrects_id IS NULL;
CREATE INDEX call_attempts_corrections_idx ON call_attempts (corrects_id, inserted_at) WHERE corrects_id IS NOT NULL;
CREATE INDEX call_attempts_page_idx ON call_attempts (tenant_id, inserted_at, id);
CREATE UNIQUE INDEX call_attempts_call_uuid_key ON call_attempts (tenant_id, call_uuid) WHERE corrects_id IS NULL AND call_uuid IS NOT NULL;

CREATE FUNCTION call_attempts_write_once() RETURNS trigger
  LANGUAGE plpgsql
  AS $$
  BEGIN
    IF OLD.corrects_id IS NULL
       AND (NEW.call_uuid IS NOT DISTINCT FROM OLD.call_uuid OR OLD.call_uuid IS NULL)
       AND (NEW.answered_at IS NOT DISTINCT FROM OLD.answered_at OR OLD.answered_at IS NULL)
       AND (NEW.from_number IS NOT DISTINCT FROM OLD.from_number OR OLD.from_number IS NULL)
       AND (to_jsonb(NEW) - 'call_uuid' - 'answered_at' - 'from_number')
           = (to_jsonb(OLD) - 'call_uuid' - 'answered_at' - 'from_number') THEN
      RETURN NEW;
    END IF;
    RAISE EXCEPTION 'call_attempts is append-only: only call_uuid, answered_at and from_number of an original row may be filled once'
      USING ERRCODE = 'insufficient_privilege';
  END $$;
CREATE TRIGGER call_attempts_write_once BEFORE UPDATE ON call_attempts FOR EACH ROW EXECUTE FUNCTION call_attempts_write_once();
CREATE TRIGGER call_attempts_no_delete BEFORE DELETE ON call_attempts FOR EACH ROW EXECUTE FUNCTION refuse_mutation();
CREATE TRIGGER call_attempts_no_truncate BEFORE TRUNCATE ON call_attempts FOR EACH STATEMENT EXECUTE FUNCTION refuse_mutation();

-- Refusal evidence: one row per (debt, gate, campaign, UTC day), counting the refusals.
CREATE TABLE compliance_refusals (
  id                uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  tenant_id         uuid NOT NULL REFERENCES tenants (id),
  debt_id           uuid NOT NULL REFERENCES debts (id),
  gate              text NOT NULL CHECK (gate IN ('tcpa_no_consent', 'quiet_hours', 'regf_7in7', 'regf_post_contact',
                      'state_limit', 'dnc_listed', 'consent_revoked', 'cease_and_desist', 'number_reassigned', 'tenant_policy')),
  campaign_id       uuid REFERENCES campaigns (id),
  day               date NOT NULL,
  refusals          integer NOT NULL DEFAULT 1,
  first_decision_id uuid NOT NULL,
  last_decision_id  uuid NOT NULL,
  first_at          timestamptz(3) NOT NULL,
  last_at           timestamptz(3) NOT NULL
);
-- A refusal outside any campaign (a manual dial or an API text) keys on the zero uuid.
CREATE UNIQUE INDEX compliance_refusals_key ON compliance_refusals
  (tenant_id, debt_id, gate, (coalesce(campaign_id, '00000000-0000-0000-0000-000000000000'::uuid)), day);
CREATE INDEX compliance_refusals_day_idx ON compliance_refusals (tenant_id, day, gate);

-- Tenant compliance policy, versioned: every decision cites the version it applied.
CREATE TABLE compliance_policy_versions (
  tenant_id  uuid NOT NULL REFERENCES tenants (id),
  version    integer NOT NULL CHECK (version >= 1),
  policy     jsonb NOT NULL,
  actor      text NOT NULL,
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, version)
);
CREATE TRIGGER compliance_policy_versions_append_only BEFORE UPDATE OR DELETE ON compliance_policy_versions
  FOR EACH ROW EXECUTE FUNCTION refuse_mutation();

-- The tenant's non-AI artificial-voice disclosure, resolved per attempt.
CREATE TABLE artificial_voice_disclosures (
  tenant_id  uuid PRIMARY KEY REFERENCES tenants (id),
  text       text NOT NULL CHECK (octet_length(text) <= 10000),
  source     text NOT NULL CHECK (source IN ('api', 'import', 'migration')),
  actor      text NOT NULL,
  updated_at timestamptz(3) NOT NULL DEFAULT now()
);

DO $$
DECLARE t text;
BEGIN
  FOREACH t IN ARRAY ARRAY['campaigns', 'debts', 'debt_contacts', 'consents', 'dnc_entries', 'reassigned_numbers',
                           'debt_prior_attempts', 'call_attempts', 'compliance_refusals', 'compliance_policy_versions',
                           'artificial_voice_disclosures']
  LOOP
    EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', t);
    EXECUTE format('ALTER TABLE %I FORCE ROW LEVEL SECURITY', t);
    EXECUTE format('CREATE POLICY tenant_isolation ON %I USING (tenant_id = app_tenant_id()) '
                   'WITH CHECK (tenant_id = app_tenant_id())', t);
  END LOOP;
END $$;

-- Evidence and history are never deleted by the application.
GRANT SELECT, INSERT, UPDATE ON campaigns, debts, debt_contacts, consents, dnc_entries, compliance_refusals,
  artificial_voice_disclosures TO dialer_app;
GRANT SELECT, INSERT ON reassigned_numbers, debt_prior_attempts, compliance_policy_versions TO dialer_app;
-- UPDATE on the CDR is limited by call_attempts_write_once to the one documented fill.
GRANT SELECT, INSERT, UPDATE ON call_attempts TO dialer_app;
