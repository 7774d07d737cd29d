-- When a DID stopped being held: invoices count the DIDs held at any time in their month, so a
-- closed month bills the same however often it is read, whatever was retired since. Kept by a
-- trigger so every writer (API, operator provisioning, imports) records it alike; a DID set back
-- from retired is held again (retired_at cleared). Rows retired before this column existed take
-- their last update as the retirement time.
ALTER TABLE dids ADD COLUMN retired_at timestamptz(3);
UPDATE dids SET retired_at = updated_at WHERE status = 'retired';
ALTER TABLE dids ADD CONSTRAINT dids_retired_at_check CHECK ((status = 'retired') = (retired_at IS NOT NULL));

CREATE FUNCTION dids_track_retirement() RETURNS trigger
  LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.status <> 'retired' THEN
    NEW.retired_at := NULL;
  ELSIF TG_OP = 'INSERT' OR OLD.status <> 'retired' THEN
    NEW.retired_at := coalesce(NEW.retired_at, now());
  ELSE
    NEW.retired_at := OLD.retired_at;
  END IF;
  RETURN NEW;
END $$;

CREATE TRIGGER dids_track_retirement BEFORE INSERT OR UPDATE OF status, retired_at ON dids
  FOR EACH ROW EXECUTE FUNCTION dids_track_retirement();
