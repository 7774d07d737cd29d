-- Retention of a tenant's evidence (issue 19). Regulation F keeps the records that evidence a
-- collector's compliance for three years after its last collection activity on a debt
-- (12 CFR 1006.100(a)); call recordings are such records, so 36 months is the least a tenant may
-- keep and where a new tenant starts.

-- Tenants below the minimum are raised to it. Their recordings not yet purged keep their audio
-- at least as long as the raised retention says (never shorter than already promised).
UPDATE recordings r
   SET retained_until = greatest(r.retained_until, ((r.created_at AT TIME ZONE 'UTC')::date + interval '36 months')::date)
  FROM tenants t
 WHERE t.id = r.tenant_id AND t.retention_months < 36 AND r.audio_purged_at IS NULL;
UPDATE tenants SET retention_months = 36 WHERE retention_months < 36;

ALTER TABLE tenants
  ALTER COLUMN retention_months SET DEFAULT 36,
  DROP CONSTRAINT tenants_retention_months_check,
  ADD CONSTRAINT tenants_retention_months_check CHECK (retention_months BETWEEN 36 AND 240);

-- retained_until is no longer frozen: PUT /v1/tenant/retention re-dates every recording whose
-- audio is still kept to its creation date (UTC) plus the new retention_months.
COMMENT ON COLUMN recordings.retained_until IS 'creation date (UTC) plus the tenant retention_months; re-dated when the retention changes';
