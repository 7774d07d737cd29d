import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { AppDeps } from '../src/deps';
import { appendAuditSql } from '../src/lib/audit';
import { withTenantSql } from '../src/lib/tenancy';
import type { RecordingFilters } from '../src/modules/recordings/recording.filters';
import { writeExportArchive } from '../src/modules/recording-exports/recording-export.archive';
import {
  claimExport,
  completeExport,
  failExport,
  findExport,
  selectExportRows,
  touchExport,
} from '../src/modules/recording-exports/recording-export.repository';
import { EXPORT_ROW_CAP, exportStorageKey } from '../src/modules/recording-exports/recording-export.rules';

export interface RecordingExportRef {
  tenantId: string;
  exportId: string;
}

/** How often the job row's heartbeat_at advances while the archive streams (well under the stale limit). */
const DB_HEARTBEAT_MS = 10_000;
/** Well under the workflow's one-minute heartbeat timeout. */
const ACTIVITY_HEARTBEAT_MS = 10_000;

/** The job is no longer this run's to finish (released as stale, or gone): stop without retrying. */
const claimLost = (exportId: string) =>
  ApplicationFailure.nonRetryable(`recording export ${exportId} is no longer running`, 'RecordingExportClaimLost');

function activityContext(): Context | null {
  try {
    return Context.current();
  } catch {
    return null;
  }
}

const workflowActor = { actorType: 'workflow' as const, actorId: null };

export function createRecordingExportActivities(deps: AppDeps) {
  return {
    /** queued → running. false when the job is not queued any more (a retry after the claim, or released). */
    async claimRecordingExport(input: RecordingExportRef): Promise<{ claimed: boolean }> {
      return withTenantSql(deps.db, input.tenantId, async (sql) => {
        if (await claimExport(sql, input.tenantId, input.exportId)) return { claimed: true };
        const row = await findExport(sql, input.tenantId, input.exportId);
        return { claimed: row?.status === 'running' };
      });
    },

    /**
     * Selects the rows, streams the archive into the store and marks the job done with its size and
     * SHA-256, audited as recording_export.completed. Store failures are thrown as they are, so
     * Temporal retries them; a retry rewrites the same key from the start.
     */
    async buildRecordingExport(input: RecordingExportRef): Promise<{ rowCount: number }> {
      const { tenantId, exportId } = input;
      const ctx = activityContext();
      const job = await withTenantSql(deps.db, tenantId, (sql) => findExport(sql, tenantId, exportId));
      if (!job || job.status !== 'running') throw claimLost(exportId);
      const filters = job.filters as RecordingFilters;
      const rows = await withTenantSql(deps.db, tenantId, (sql) => selectExportRows(sql, tenantId, filters, EXPORT_ROW_CAP + 1));
      const capped = rows.length > EXPORT_ROW_CAP;
      const included = capped ? rows.slice(0, EXPORT_ROW_CAP) : rows;
      const key = exportStorageKey(tenantId, exportId);

      let lastBeat = Date.now();
      const progress = async () => {
        ctx?.heartbeat();
        if (Date.now() - lastBeat < DB_HEARTBEAT_MS) return;
        lastBeat = Date.now();
        if (!(await withTenantSql(deps.db, tenantId, (sql) => touchExport(sql, tenantId, exportId)))) throw claimLost(exportId);
      };
      // Between entries progress() beats; this covers one entry the store is slow to take.
      const beat = setInterval(() => ctx?.heartbeat(), ACTIVITY_HEARTBEAT_MS);
      let archive;
      try {
        archive = await writeExportArchive(deps.objectStore, key, included, new Date(), progress);
      } finally {
        clearInterval(beat);
      }

      const completed = await withTenantSql(deps.db, tenantId, async (sql) => {
        const done = await completeExport(sql, tenantId, exportId, { rowCount: included.length, audioFiles: archive.audioIncluded, storageKey: key, sizeBytes: archive.sizeBytes, sha256: archive.sha256 });
        if (done) {
          await appendAuditSql(sql, tenantId, [
            {
              ...workflowActor,
              action: 'recording_export.completed',
              subjectType: 'recording_export',
              subjectId: exportId,
              payload: { row_count: included.length, audio_included: archive.audioIncluded, capped, size_bytes: archive.sizeBytes, sha256: archive.sha256 },
            },
          ]);
        }
        return done;
      });
      if (!completed) {
        await deps.objectStore.delete(key).catch(() => undefined);
        throw claimLost(exportId);
      }
      return { rowCount: included.length };
    },

    /** running (or queued) → failed with the reason, audited; a job already finished is left as it is. */
    async failRecordingExport(input: RecordingExportRef & { error: string }): Promise<void> {
      await withTenantSql(deps.db, input.tenantId, async (sql) => {
        if (!(await failExport(sql, input.tenantId, input.exportId, input.error))) return;
        await appendAuditSql(sql, input.tenantId, [
          { ...workflowActor, action: 'recording_export.failed', subjectType: 'recording_export', subjectId: input.exportId, payload: { error: input.error } },
        ]);
      });
    },
  };
}

export type RecordingExportActivities = ReturnType<typeof createRecordingExportActivities>;
