-- Compliance facts from real events (CONTRACT sections 9 and 12).

-- Telephone conversations as recorded facts: one append-only row per proof, written in the same
-- transaction as the event that proves it (an agent bridge, an answered inbound call reaching an
-- agent or an AI agent, an AI call past right-party verification, a right-party disposition on an
-- answered attempt). debts.last_conversation_at follows from this ledger and nothing else.
CREATE TABLE conversations (
  id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  tenant_id       uuid NOT NULL REFERENCES tenants (id),
  debt_id         uuid NOT NULL REFERENCES debts (id),
  -- Null only on conversations carried over from before the ledger whose debt had no contact.
  phone_e164      text CHECK (phone_e164 ~ '^\+[1-9][0-9]{6,14}$'),
  source          text NOT NULL CHECK (source IN ('agent_bridge', 'inbound', 'ai_verified', 'disposition')),
  call_attempt_id uuid REFERENCES call_attempts (id),
  occurred_at     timestamptz(3) NOT NULL,
  evidence        jsonb NOT NULL DEFAULT '{}'::jsonb,
  recorded_at     timestamptz(3) NOT NULL DEFAULT now()
);
-- One row per (call, source): a retried activity or a replayed event proves nothing new.
CREATE UNIQUE INDEX conversations_call_source_key ON conversations (tenant_id, call_attempt_id, source) WHERE call_attempt_id IS NOT NULL;
CREATE INDEX conversations_debt_idx ON conversations (tenant_id, debt_id, occurred_at);
CREATE TRIGGER conversations_no_update BEFORE UPDATE OR DELETE ON conversations FOR EACH ROW EXECUTE FUNCTION refuse_mutation();
CREATE TRIGGER conversations_no_truncate BEFORE TRUNCATE ON conversations FOR EACH STATEMENT EXECUTE FUNCTION refuse_mutation();

-- The debt's latest conversation moves only forward, only from the ledger, in the same statement.
CREATE FUNCTION conversations_advance_debt() RETURNS trigger
  LANGUAGE plpgsql
  AS $$ BEGIN
    UPDATE debts SET last_conversation_at = NEW.occurred_at, updated_at = now()
     WHERE id = NEW.debt_id AND (last_conversation_at IS NULL OR last_conversation_at < NEW.occurred_at);
    RETURN NEW;
  END $$;
CREATE TRIGGER conversations_advance_debt AFTER INSERT ON conversations FOR EACH ROW EXECUTE FUNCTION conversations_advance_debt();

ALTER TABLE conversations ENABLE ROW LEVEL SECURITY;
ALTER TABLE conversations FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON conversations USING (tenant_id = app_tenant_id()) WITH CHECK (tenant_id = app_tenant_id());
GRANT SELECT, INSERT ON conversations TO dialer_app;

-- Conversations before this ledger existed were written by hand (tests, fixtures); keep each as a
-- fact so the debt's value is explained by a row.
INSERT INTO conversations (tenant_id, debt_id, phone_e164, source, occurred_at, evidence)
SELECT d.tenant_id, d.id, c.phone_e164, 'disposition', d.last_conversation_at,
       jsonb_build_object('migrated', true)
  FROM debts d
  LEFT JOIN LATERAL (SELECT phone_e164 FROM debt_contacts k WHERE k.debt_id = d.id ORDER BY is_primary DESC, created_at LIMIT 1) c ON true
 WHERE d.last_conversation_at IS NOT NULL;

-- The date the consumer gave the number (import contacts[].consent_given_on): the reassigned-number
-- check compares a disconnection with it. Unknown (null) means any disconnection on record refuses.
ALTER TABLE consents ADD COLUMN given_on date;

-- The state a contact's postal code lies in (resolved at import, beside nyc_borough).
ALTER TABLE debt_contacts ADD COLUMN postal_state text CHECK (postal_state ~ '^[A-Z]{2}$');
CREATE INDEX debt_contacts_debt_idx ON debt_contacts (debt_id);

-- Right-party verification data for consult_config factors: write-only import fields, encrypted at
-- rest with the application key (CryptoBox), never returned or logged.
ALTER TABLE debts ADD COLUMN verify_dob_ciphertext text;
ALTER TABLE debts ADD COLUMN verify_ssn_last4_ciphertext text;
ALTER TABLE debts ADD COLUMN verify_pin_ciphertext text;

-- A wrong party (a disposition, the AI) and a spoken revocation (to an agent or the AI) list the
-- number too; START lifts only the keyword listing.
ALTER TABLE dnc_entries DROP CONSTRAINT dnc_entries_source_check;
ALTER TABLE dnc_entries ADD CONSTRAINT dnc_entries_source_check
  CHECK (source IN ('suppression_import', 'optout_keyword', 'optout_digit', 'api', 'wrong_number', 'verbal_revocation'));
