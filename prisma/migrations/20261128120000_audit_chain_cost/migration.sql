-- The audit chain at 1,000 compliance decisions a second (issue 20). Measured per appended entry
-- (EXPLAIN ANALYZE of the evidence statement, 3 KB decision payloads): the chain trigger took
-- 0.27 ms, more than the insert it guards. Two causes, neither visible in the text:
--
-- 1. audit_log_canonical and audit_field are SQL functions called from a PL/pgSQL expression.
--    A SQL function that is not inlined re-parses and re-plans its body whenever its call site's
--    state is new, and PL/pgSQL builds that state per transaction: every decision transaction
--    paid a parse and plan of the canonical text's functions.
-- 2. Where audit_field was inlined, its argument was copied into every use of the parameter
--    (IS NULL, octet_length, the text itself), so the payload's jsonb was printed as text and
--    hashed three times per entry.
--
-- The canonical text is now built by a PL/pgSQL function (compiled and planned once per
-- connection) from the payload's digest, computed once. audit_log_canonical keeps its signature
-- and output (proofs and src/lib/audit.ts read the same text) and delegates to it, so the trigger
-- and the verifiers cannot drift apart. The trigger's result is bit-for-bit what it was.
CREATE FUNCTION audit_log_canonical_digest(
  p_tenant_id uuid, p_lane smallint, p_seq bigint, p_prev_hash text, p_occurred_at timestamptz, p_actor_type text,
  p_actor_id text, p_action text, p_subject_type text, p_subject_id text, p_payload_digest text
) RETURNS text
  LANGUAGE plpgsql IMMUTABLE
  AS $$
  DECLARE
    occurred text := to_char(p_occurred_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"');
  BEGIN
    RETURN 'audit-v1;' || audit_field(p_tenant_id::text) || audit_field(p_lane::text) || audit_field(p_seq::text)
      || audit_field(p_prev_hash) || audit_field(occurred)
      || audit_field(p_actor_type) || audit_field(p_actor_id) || audit_field(p_action)
      || audit_field(p_subject_type) || audit_field(p_subject_id)
      || audit_field(p_payload_digest);
  END $$;

CREATE OR REPLACE FUNCTION audit_log_canonical(
  p_tenant_id uuid, p_lane smallint, p_seq bigint, p_prev_hash text, p_occurred_at timestamptz, p_actor_type text,
  p_actor_id text, p_action text, p_subject_type text, p_subject_id text, p_payload jsonb
) RETURNS text
  LANGUAGE sql IMMUTABLE
  AS $$
    SELECT audit_log_canonical_digest(p_tenant_id, p_lane, p_seq, p_prev_hash, p_occurred_at, p_actor_type, p_actor_id,
                                      p_action, p_subject_type, p_subject_id,
                                      encode(sha256(convert_to(p_payload::text, 'UTF8')), 'hex'))
  $$;

CREATE OR REPLACE FUNCTION audit_log_chain() RETURNS trigger
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
    NEW.hash := encode(sha256(convert_to(audit_log_canonical_digest(
      NEW.tenant_id, NEW.lane, NEW.seq, NEW.prev_hash, NEW.occurred_at, NEW.actor_type, NEW.actor_id,
      NEW.action, NEW.subject_type, NEW.subject_id, encode(sha256(convert_to(NEW.payload::text, 'UTF8')), 'hex')), 'UTF8')), 'hex');
    RETURN NEW;
  END $$;

-- A decision's payload (facts, checks, citations) is about 3 KB of jsonb, above the size at which
-- PostgreSQL compresses a row; pglz was the largest single cost of the insert in a profile of the
-- decision path. lz4 compresses such payloads several times faster. A server built without lz4
-- keeps pglz: the column then works exactly as before.
DO $$
BEGIN
  ALTER TABLE audit_log ALTER COLUMN payload SET COMPRESSION lz4;
EXCEPTION WHEN feature_not_supported OR invalid_parameter_value THEN
  RAISE NOTICE 'lz4 is not available on this server; audit_log.payload keeps pglz';
END $$;
