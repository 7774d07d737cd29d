-- Recordings, the tenant's recording policy, and recording exports. Issue 8.

-- One row per recorded call, written when the call ends. The row is evidence and is never
-- deleted: retention purges the audio (audio_purged_at) and keeps the metadata.
CREATE TABLE recordings (
  id                      uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  tenant_id               uuid NOT NULL REFERENCES tenants (id),
  call_attempt_id         uuid NOT NULL REFERENCES call_attempts (id),
  call_uuid               text NOT NULL,
  campaign_id             uuid REFERENCES campaigns (id),
  debt_id                 uuid REFERENCES debts (id),
  agent_id                uuid REFERENCES agents (id),
  phone_number            text NOT NULL,
  account_ref             text,
  external_ref            text,
  started_at              timestamptz(3) NOT NULL,
  ended_at                timestamptz(3),
  duration_secs           integer CHECK (duration_secs >= 0),
  local_tz                text,
  -- The state whose all-party consent rule applied to the call (null when none did).
  two_party_consent_state text,
  consent_notice_played   boolean NOT NULL DEFAULT false,
  attest_a                boolean NOT NULL DEFAULT false,
  ai_used                 boolean NOT NULL DEFAULT false,
  storage_key             text,
  content_type            text,
  size_bytes              bigint CHECK (size_bytes >= 0),
  sha256                  text,
  -- Frozen at creation from the tenant's retention_months; a later change never moves it.
  retained_until          date NOT NULL,
  legal_hold              boolean NOT NULL DEFAULT false,
  legal_hold_reason       text CHECK (length(legal_hold_reason) <= 500),
  legal_hold_at           timestamptz(3),
  audio_purged_at         timestamptz(3),
  created_at              timestamptz(3) NOT NULL DEFAULT now(),
  updated_at              timestamptz(3) NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX recordings_call_key ON recordings (tenant_id, call_uuid);
CREATE INDEX recordings_page_idx ON recordings (tenant_id, started_at DESC, id DESC);
CREATE INDEX recordings_purge_idx ON recordings (retained_until) WHERE NOT legal_hold AND audio_purged_at IS NULL;
CREATE TRIGGER recordings_updated_at BEFORE UPDATE ON recordings FOR EACH ROW EXECUTE FUNCTION set_updated_at();

-- The tenant's recording policy; a tenant without a row has the defaults.
CREATE TABLE recording_policies (
  tenant_id                uuid PRIMARY KEY REFERENCES tenants (id),
  -- What happens when an all-party-consent state applies: play the notice and record, or do not record.
  all_party_mode           text NOT NULL DEFAULT 'notice' CHECK (all_party_mode IN ('notice', 'skip')),
  notice_text              text NOT NULL DEFAULT 'This call may be recorded for quality and compliance purposes.'
                             CHECK (length(notice_text) BETWEEN 1 AND 2000),
  playback_url_ttl_seconds integer NOT NULL DEFAULT 300 CHECK (playback_url_ttl_seconds BETWEEN 30 AND 3600),
  export_url_ttl_seconds   integer NOT NULL DEFAULT 3600 CHECK (export_url_ttl_seconds BETWEEN 60 AND 86400),
  created_at               timestamptz(3) NOT NULL DEFAULT now(),
  updated_at               timestamptz(3) NOT NULL DEFAULT now()
);
CREATE TRIGGER recording_policies_updated_at BEFORE UPDATE ON recording_policies FOR EACH ROW EXECUTE FUNCTION set_updated_at();

-- Export jobs. At most one generating (queued or running) per tenant; filter_hash identifies an
-- identical request for the dedup window.
CREATE TABLE recording_exports (
  id           uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  tenant_id    uuid NOT NULL REFERENCES tenants (id),
  status       text NOT NULL DEFAULT 'queued' CHECK (status IN ('queued', 'running', 'done', 'failed')),
  filters      jsonb NOT NULL,
  filter_hash  text NOT NULL,
  requested_by text,
  row_count    integer CHECK (row_count >= 0),
  storage_key  text,
  size_bytes   bigint CHECK (size_bytes >= 0),
  sha256       text,
  error        text,
  claimed_at   timestamptz(3),
  heartbeat_at timestamptz(3),
  started_at   timestamptz(3),
  finished_at  timestamptz(3),
  created_at   timestamptz(3) NOT NULL DEFAULT now(),
  updated_at   timestamptz(3) NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX recording_exports_one_generating_key ON recording_exports (tenant_id) WHERE status IN ('queued', 'running');
CREATE INDEX recording_exports_dedup_idx ON recording_exports (tenant_id, filter_hash, finished_at DESC) WHERE status = 'done';
CREATE INDEX recording_exports_page_idx ON recording_exports (tenant_id, created_at DESC, id DESC);
CREATE TRIGGER recording_exports_updated_at BEFORE UPDATE ON recording_exports FOR EACH ROW EXECUTE FUNCTION set_updated_at();

DO $$
DECLARE t text;
BEGIN
  FOREACH t IN ARRAY ARRAY['recordings', 'recording_policies', 'recording_exports']
  LOOP
    EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', t);
    EXECUTE format('ALTER TABLE %I FORCE ROW LEVEL SECURITY', t);
    EXECUTE format('CREATE POLICY tenant_isolation ON %I USING (tenant_id = app_tenant_id()) '
                   'WITH CHECK (tenant_id = app_tenant_id())', t);
  END LOOP;
END $$;

GRANT SELECT, INSERT, UPDATE ON recordings, recording_policies, recording_exports TO dialer_app;

-- The retention sweep runs for every tenant before it knows whose rows are due: a narrow
-- SECURITY DEFINER listing that answers only ids and tenants; each purge then runs inside its
-- own tenant's transaction.
CREATE FUNCTION recording_purge_due(p_limit integer)
  RETURNS TABLE (recording_id uuid, tenant_id uuid)
  LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp
  AS $$
    SELECT r.id, r.tenant_id FROM recordings r
     WHERE r.retained_until < (now() AT TIME ZONE 'UTC')::date
       AND NOT r.legal_hold AND r.audio_purged_at IS NULL
     ORDER BY r.retained_until, r.id
     LIMIT p_limit
  $$;

-- Exports whose claim went stale (a worker died mid-export) for every tenant.
CREATE FUNCTION recording_exports_stale(p_stale_seconds integer)
  RETURNS TABLE (export_id uuid, tenant_id uuid)
  LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp
  AS $$
    SELECT e.id, e.tenant_id FROM recording_exports e
     WHERE e.status IN ('queued', 'running')
       AND coalesce(e.heartbeat_at, e.claimed_at, e.created_at) < now() - make_interval(secs => p_stale_seconds)
  $$;

REVOKE ALL ON FUNCTION recording_purge_due(integer), recording_exports_stale(integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION recording_purge_due(integer), recording_exports_stale(integer) TO dialer_app;
