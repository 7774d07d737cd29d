-- Number ownership (issue 17, CONTRACT.md section 13). A number is an ACTIVE DID of at most one
-- tenant on the platform, and a customer DID becomes active only once its tenant proved control of
-- the number (a code sent to it by the platform's SMS provider, confirmed through the API).

-- Numbers already active in more than one tenant: the oldest active row (created_at, then id) keeps
-- the number; every other one moves to quarantine (updated_at marks the move). Nothing is deleted,
-- and a quarantined tenant can take the number back only through the verification below once the
-- keeper lets it go.
UPDATE dids d SET status = 'quarantine'
  FROM (SELECT id, row_number() OVER (PARTITION BY e164 ORDER BY created_at, id) AS n FROM dids WHERE status = 'active') ranked
 WHERE d.id = ranked.id AND ranked.n > 1;

-- Enforced across tenants whatever RLS lets a session see: a unique index is checked on every row.
CREATE UNIQUE INDEX dids_e164_active_key ON dids (e164) WHERE status = 'active';

-- The proof of control of a customer DID. One verification at a time per DID: a new code replaces
-- the previous one. The code is stored only as a salted HMAC (verification_code_hash); 'expired' is
-- derived at read time from verification_expires_at. 'legacy': a customer DID that was active before
-- this migration, taken as proven (it may come back from quarantine without a code).
-- verification_sends counts the codes sent since verification_sends_since (a per-DID budget), and
-- verification_sent_at is the latest send (the per-tenant budget counts DIDs by it).
ALTER TABLE dids
  ADD COLUMN verification_status text CHECK (verification_status IN ('pending', 'verified', 'failed', 'undelivered')),
  ADD COLUMN verification_method text CHECK (verification_method IN ('sms', 'legacy')),
  ADD COLUMN verification_code_hash text,
  ADD COLUMN verification_attempts integer NOT NULL DEFAULT 0 CHECK (verification_attempts >= 0),
  ADD COLUMN verification_expires_at timestamptz(3),
  ADD COLUMN verification_sent_at timestamptz(3),
  ADD COLUMN verification_sends integer NOT NULL DEFAULT 0 CHECK (verification_sends >= 0),
  ADD COLUMN verification_sends_since timestamptz(3),
  ADD CONSTRAINT dids_verification_pair_check CHECK ((verification_status IS NULL) = (verification_method IS NULL));
CREATE INDEX dids_verification_sent_idx ON dids (tenant_id, verification_sent_at) WHERE verification_sent_at IS NOT NULL;

ALTER TABLE dids DISABLE TRIGGER dids_updated_at;
UPDATE dids SET verification_status = 'verified', verification_method = 'legacy' WHERE origin = 'customer' AND status = 'active';
ALTER TABLE dids ENABLE TRIGGER dids_updated_at;

-- Whether a number is an active DID of a tenant other than the session's: the one cross-tenant fact
-- registration, verification and campaign caller ids need, answered as a boolean and nothing more.
CREATE FUNCTION did_active_elsewhere(p_e164 text)
  RETURNS boolean
  LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp
  AS $$
    SELECT EXISTS (SELECT 1 FROM dids d WHERE d.e164 = p_e164 AND d.status = 'active' AND d.tenant_id IS DISTINCT FROM app_tenant_id())
  $$;

-- Proof of control is exclusive: when the session's tenant proves control of a number, an earlier
-- proof another tenant holds for it (on a DID that is not active) no longer counts, so that tenant
-- cannot set the number active again without a new code. Touches only those verification columns.
CREATE FUNCTION did_revoke_other_proofs(p_e164 text)
  RETURNS void
  LANGUAGE sql VOLATILE SECURITY DEFINER SET search_path = public, pg_temp
  AS $$
    UPDATE dids SET verification_status = NULL, verification_method = NULL, verification_code_hash = NULL,
                    verification_attempts = 0, verification_expires_at = NULL
     WHERE e164 = p_e164 AND status <> 'active' AND origin = 'customer' AND verification_status = 'verified'
       AND tenant_id IS DISTINCT FROM app_tenant_id() AND app_tenant_id() IS NOT NULL
  $$;

REVOKE ALL ON FUNCTION did_active_elsewhere(text), did_revoke_other_proofs(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION did_active_elsewhere(text), did_revoke_other_proofs(text) TO dialer_app;
