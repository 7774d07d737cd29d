-- Key rotation (issue 17): `npm run ops -- keys rotate` re-encrypts every encrypted column under the
-- current APP_ENCRYPTION_KEY. call_attempts is append-only, so its note could never be re-encrypted:
-- the one exception is the owner role (the migrator's connection, never the API's dialer_app), in a
-- transaction that declares the rotation, replacing a note's ciphertext by another ciphertext and
-- nothing else. The plaintext cannot be checked here; the command only writes what it decrypted.
CREATE OR REPLACE FUNCTION call_attempts_write_once() RETURNS trigger
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
    IF current_user = 'dialer_owner'
       AND current_setting('app.key_rotation', true) = 'on'
       AND OLD.note_ciphertext IS NOT NULL
       AND NEW.note_ciphertext LIKE 'v2.%'
       AND (to_jsonb(NEW) - 'note_ciphertext') = (to_jsonb(OLD) - 'note_ciphertext') THEN
      RETURN NEW;
    END IF;
    RAISE EXCEPTION 'call_attempts is append-only: only call_uuid, answered_at and from_number of an original row may be filled once'
      USING ERRCODE = 'insufficient_privilege';
  END $$;
