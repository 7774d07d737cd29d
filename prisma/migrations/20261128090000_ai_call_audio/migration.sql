-- Voice AI on real audio (docs/ai-calls.md): what the AI heard joins the call's timeline, and the
-- words of an AI call (its transcript, and the heard lines of its timeline) are kept as long as
-- the call's recording: purged at the same horizon unless the recording is under legal hold.

-- Timeline events: `heard` (a recognized consumer utterance: masked words, confidence, audio
-- offsets) and `barge_in` (the consumer spoke over the AI, which stopped).
ALTER TABLE call_events DROP CONSTRAINT call_events_event_check;
ALTER TABLE call_events ADD CONSTRAINT call_events_event_check
  CHECK (event IN ('originate', 'ringing', 'answered', 'amd', 'bridged', 'spoken', 'digit', 'recording_started',
                   'recording_stopped', 'transferred', 'hangup', 'heard', 'barge_in'));

-- The timeline stays append-only, with one exception: the retention purge drops the words of a
-- `heard` row (everything else of the row is kept, and it says the words were purged).
CREATE FUNCTION call_events_guard() RETURNS trigger
  LANGUAGE plpgsql
  AS $$ BEGIN
    IF TG_OP = 'UPDATE' AND OLD.event = 'heard' AND NEW.event = OLD.event AND NEW.id = OLD.id
       AND NEW.tenant_id = OLD.tenant_id AND NEW.call_attempt_id = OLD.call_attempt_id AND NEW.at = OLD.at
       AND NEW.dedup_key IS NOT DISTINCT FROM OLD.dedup_key AND NEW.recorded_at = OLD.recorded_at
       AND NEW.data = (OLD.data - 'text') || '{"text_purged": true}'::jsonb THEN
      RETURN NEW;
    END IF;
    RAISE EXCEPTION '% on % is not allowed: the table is append-only', TG_OP, TG_TABLE_NAME
      USING ERRCODE = 'insufficient_privilege';
  END $$;
DROP TRIGGER call_events_no_update ON call_events;
CREATE TRIGGER call_events_no_update BEFORE UPDATE OR DELETE ON call_events FOR EACH ROW EXECUTE FUNCTION call_events_guard();
GRANT UPDATE (data) ON call_events TO dialer_app;

ALTER TABLE ai_conversations ADD COLUMN transcript_purged_at timestamptz(3);

-- AI calls whose words are due for purge, across tenants (ids and tenants only; each purge runs in
-- its tenant's transaction): the call's recording's retained_until, or for a call without one the
-- date its recording would have had (the conversation's start, UTC, plus the tenant's
-- retention_months), is past; the recording is not under legal hold.
CREATE FUNCTION ai_transcript_purge_due(p_limit integer)
  RETURNS TABLE (conversation_id uuid, tenant_id uuid)
  LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp
  AS $$
    SELECT c.id, c.tenant_id FROM ai_conversations c
      JOIN tenants t ON t.id = c.tenant_id
      LEFT JOIN recordings r ON r.tenant_id = c.tenant_id AND r.call_uuid = c.call_uuid
     WHERE c.kind = 'call' AND c.transcript_purged_at IS NULL AND c.status <> 'active'
       AND NOT coalesce(r.legal_hold, false)
       AND coalesce(r.retained_until,
                    ((c.started_at AT TIME ZONE 'UTC')::date + make_interval(months => t.retention_months))::date)
           < (now() AT TIME ZONE 'UTC')::date
     ORDER BY c.started_at, c.id
     LIMIT p_limit
  $$;
REVOKE ALL ON FUNCTION ai_transcript_purge_due(integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ai_transcript_purge_due(integer) TO dialer_app;
