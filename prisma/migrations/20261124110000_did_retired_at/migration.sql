-- Which DIDs a tenant held in a period: invoices count the DIDs held at any time in their month, so
-- a closed month bills the same however often it is read, whatever is retired or brought back later.
-- dids.retired_at is the current retirement (null while held); did_retirements keeps every retired
-- gap [retired_at, reheld_at), so a DID set back from retired does not erase the months it was out.
-- Both are kept by triggers, so every writer (API, operator provisioning, imports) records them alike.
ALTER TABLE dids ADD COLUMN retired_at timestamptz(3);

CREATE TABLE did_retirements (
  id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  tenant_id   uuid NOT NULL REFERENCES tenants (id),
  did_id      uuid NOT NULL REFERENCES dids (id),
  retired_at  timestamptz(3) NOT NULL,
  reheld_at   timestamptz(3),
  CHECK (reheld_at IS NULL OR reheld_at >= retired_at)
);
CREATE INDEX did_retirements_did_idx ON did_retirements (did_id, retired_at);
CREATE UNIQUE INDEX did_retirements_open_key ON did_retirements (did_id) WHERE reheld_at IS NULL;
ALTER TABLE did_retirements ENABLE ROW LEVEL SECURITY;
ALTER TABLE did_retirements FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON did_retirements USING (tenant_id = app_tenant_id()) WITH CHECK (tenant_id = app_tenant_id());
GRANT SELECT, INSERT, UPDATE ON did_retirements TO dialer_app;

-- Retired before this migration: the time of the latest did.retired audit entry, else the last update.
ALTER TABLE dids DISABLE TRIGGER dids_updated_at;
UPDATE dids d SET retired_at = coalesce(
    (SELECT max(a.occurred_at) FROM audit_log a
      WHERE a.tenant_id = d.tenant_id AND a.action = 'did.retired' AND a.subject_type = 'did' AND a.subject_id = d.id::text),
    d.updated_at)
  WHERE d.status = 'retired';
ALTER TABLE dids ENABLE TRIGGER dids_updated_at;
INSERT INTO did_retirements (tenant_id, did_id, retired_at) SELECT tenant_id, id, retired_at FROM dids WHERE status = 'retired';
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

CREATE FUNCTION dids_record_retirement() RETURNS trigger
  LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.status = 'retired' AND (TG_OP = 'INSERT' OR OLD.status <> 'retired') THEN
    INSERT INTO did_retirements (tenant_id, did_id, retired_at) VALUES (NEW.tenant_id, NEW.id, NEW.retired_at);
  ELSIF TG_OP = 'UPDATE' AND OLD.status = 'retired' AND NEW.status <> 'retired' THEN
    UPDATE did_retirements SET reheld_at = greatest(now(), retired_at) WHERE did_id = NEW.id AND reheld_at IS NULL;
  END IF;
  RETURN NULL;
END $$;

CREATE TRIGGER dids_record_retirement AFTER INSERT OR UPDATE OF status ON dids
  FOR EACH ROW EXECUTE FUNCTION dids_record_retirement();
