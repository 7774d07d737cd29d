-- What happened on each call, as it happened (CONTRACT section 11): one append-only row per event,
-- written by the code that performs or observes it (the dial, the relay of the switch's events, the
-- call session's activities, the recording and AI activities). A call's timeline and the defense
-- packet read it; nothing rewrites it.
CREATE TABLE call_events (
  id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  tenant_id       uuid NOT NULL REFERENCES tenants (id),
  call_attempt_id uuid NOT NULL REFERENCES call_attempts (id),
  at              timestamptz(3) NOT NULL,
  event           text NOT NULL CHECK (event IN ('originate', 'ringing', 'answered', 'amd', 'bridged', 'spoken', 'digit',
                                                 'recording_started', 'recording_stopped', 'transferred', 'hangup')),
  data            jsonb NOT NULL DEFAULT '{}'::jsonb,
  -- The identity of an event reported or performed more than once (a relayed switch event twice, a
  -- retried activity): the second write adds nothing. Null for events that are new each time.
  dedup_key       text,
  recorded_at     timestamptz(3) NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX call_events_dedup_key ON call_events (tenant_id, call_attempt_id, dedup_key) WHERE dedup_key IS NOT NULL;
CREATE INDEX call_events_call_idx ON call_events (tenant_id, call_attempt_id, at, id);
CREATE TRIGGER call_events_no_update BEFORE UPDATE OR DELETE ON call_events FOR EACH ROW EXECUTE FUNCTION refuse_mutation();
CREATE TRIGGER call_events_no_truncate BEFORE TRUNCATE ON call_events FOR EACH STATEMENT EXECUTE FUNCTION refuse_mutation();

ALTER TABLE call_events ENABLE ROW LEVEL SECURITY;
ALTER TABLE call_events FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON call_events USING (tenant_id = app_tenant_id()) WITH CHECK (tenant_id = app_tenant_id());
GRANT SELECT, INSERT ON call_events TO dialer_app;
