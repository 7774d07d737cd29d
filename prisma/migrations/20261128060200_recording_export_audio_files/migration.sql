-- The WAV surcharge of the invoice (issue 19) bills each WAV file an export delivered. row_count
-- also lists recordings whose audio retention had purged (audio_included=false in the manifest), so
-- the number of audio files is kept on the job when it completes.
ALTER TABLE recording_exports ADD COLUMN audio_files integer CHECK (audio_files >= 0);

-- Exports completed before this column have the figure in their completion audit entry. The backfill
-- must not touch updated_at, which the export's own GET shows.
ALTER TABLE recording_exports DISABLE TRIGGER recording_exports_updated_at;
UPDATE recording_exports e
   SET audio_files = (a.payload ->> 'audio_included')::integer
  FROM audit_log a
 WHERE e.status = 'done' AND e.audio_files IS NULL
   AND a.tenant_id = e.tenant_id AND a.action = 'recording_export.completed'
   AND a.subject_type = 'recording_export' AND a.subject_id = e.id::text
   AND a.payload ? 'audio_included';
ALTER TABLE recording_exports ENABLE TRIGGER recording_exports_updated_at;

-- The invoice reads a tenant's completed exports by completion time.
CREATE INDEX recording_exports_finished_idx ON recording_exports (tenant_id, finished_at) WHERE status = 'done';
