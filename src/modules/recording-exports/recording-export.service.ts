import { recordingExportWorkflow, recordingExportWorkflowId } from '../../../workflows/recording-export.workflow';
import type { AppDeps } from '../../deps';
import { appendAuditSql, type ActorType } from '../../lib/audit';
import { AppError, internal, isUniqueViolation, notFound, unprocessable } from '../../lib/errors';
import { ensureStoreAvailable, type SignedUrl } from '../../lib/object-store';
import { withTenantSql, type SqlTx } from '../../lib/tenancy';
import { urlTtlsOf } from '../recordings/recording.repository';
import {
  failExport,
  findExport,
  findReusableExport,
  generatingExportId,
  insertExport,
  releaseStaleExports,
} from './recording-export.repository';
import { effectiveFilters, exportDownloadName, filterHash, resolveWindow, STALE_CLAIM_ERROR } from './recording-export.rules';
import type { CreateRecordingExportInput } from './recording-export.schemas';
import { exportJobView, type RecordingExportRow } from './recording-export.views';

type Actor = { type: ActorType; id: string | null };

const exportInProgress = () =>
  new AppError(429, 'export_in_progress', 'an export is already generating for the tenant; retry when it has finished');
const rangeTooLarge = (maxDays: number) =>
  new AppError(422, 'range_too_large', `the export range is wider than ${maxDays} days; narrow from and to`);

/** A done job's archive URL, signed afresh (the tenant's export_url_ttl_seconds); null otherwise. */
async function signedArchiveUrl(deps: AppDeps, sql: SqlTx, tenantId: string, row: RecordingExportRow): Promise<SignedUrl | null> {
  if (row.status !== 'done' || row.storage_key === null) return null;
  const ttls = await urlTtlsOf(sql, tenantId);
  return deps.objectStore.signedUrl(row.storage_key, { expiresInSeconds: ttls.exportSeconds, downloadName: exportDownloadName(row.id) });
}

/**
 * The order is the contract: the body and the range first, then the dedup hand-back (never gated
 * by the one-at-a-time rule), then stale claims are released, then the one-generating rule, then
 * the store check, and only then is a row written and its workflow started.
 */
export async function requestExport(deps: AppDeps, tenantId: string, actor: Actor, input: CreateRecordingExportInput, now = new Date()) {
  const maxDays = deps.config.RECORDING_EXPORT_MAX_RANGE_DAYS;
  const window = resolveWindow(input, now, maxDays);
  if (!window.inOrder) throw unprocessable("'from' must not be after 'to'");
  if (window.tooWide) throw rangeTooLarge(maxDays);
  const hash = filterHash(input);

  if (input.refresh !== true) {
    const reused = await withTenantSql(deps.db, tenantId, async (sql) => {
      const row = await findReusableExport(sql, tenantId, hash, deps.config.RECORDING_EXPORT_DEDUP_TTL_SECONDS);
      if (!row) return null;
      const signed = await signedArchiveUrl(deps, sql, tenantId, row);
      await appendAuditSql(sql, tenantId, [
        { actorType: actor.type, actorId: actor.id, action: 'recording_export.requested', subjectType: 'recording_export', subjectId: row.id, payload: { reused: true, filter_hash: hash } },
      ]);
      return exportJobView(row, signed);
    });
    if (reused) return reused;
  }

  const released = await withTenantSql(deps.db, tenantId, async (sql) => {
    const ids = await releaseStaleExports(sql, tenantId, deps.config.RECORDING_EXPORT_CLAIM_STALE_SECONDS);
    await appendAuditSql(
      sql,
      tenantId,
      ids.map((id) => ({ actorType: 'system' as const, action: 'recording_export.failed', subjectType: 'recording_export', subjectId: id, payload: { error: STALE_CLAIM_ERROR } })),
    );
    return { ids, generating: await generatingExportId(sql, tenantId) };
  });
  await Promise.all(released.ids.map((id) => terminateWorkflow(deps, tenantId, id)));
  if (released.generating !== null) throw exportInProgress();

  await ensureStoreAvailable(deps.objectStore);

  const filters = effectiveFilters(input, window);
  let job: RecordingExportRow;
  try {
    job = await withTenantSql(deps.db, tenantId, async (sql) => {
      const row = await insertExport(sql, tenantId, { filters, hash, requestedBy: actor.id });
      await appendAuditSql(sql, tenantId, [
        { actorType: actor.type, actorId: actor.id, action: 'recording_export.requested', subjectType: 'recording_export', subjectId: row.id, payload: { reused: false, filter_hash: hash, filters } },
      ]);
      return row;
    });
  } catch (err) {
    // Two requests raced past the check above: the one-generating unique index decided.
    if (isUniqueViolation(err)) throw exportInProgress();
    throw err;
  }
  await startWorkflow(deps, tenantId, job.id);
  return exportJobView(job, null);
}

/**
 * A job whose workflow cannot start would hold the tenant's one slot until it went stale, so it
 * fails at once (audited) and the caller gets 500 to retry.
 */
async function startWorkflow(deps: AppDeps, tenantId: string, exportId: string): Promise<void> {
  try {
    if (!deps.temporal) throw new Error('no Temporal client in this process');
    await deps.temporal.workflow.start(recordingExportWorkflow, {
      taskQueue: deps.config.TEMPORAL_TASK_QUEUE,
      workflowId: recordingExportWorkflowId(tenantId, exportId),
      args: [{ tenantId, exportId }],
    });
  } catch (err) {
    deps.logger.error({ tenantId, exportId, err: (err as Error).message }, 'recording export workflow not started');
    const error = 'the export could not be started';
    await withTenantSql(deps.db, tenantId, async (sql) => {
      if (await failExport(sql, tenantId, exportId, error)) {
        await appendAuditSql(sql, tenantId, [{ actorType: 'system', action: 'recording_export.failed', subjectType: 'recording_export', subjectId: exportId, payload: { error } }]);
      }
    });
    throw internal('the export could not be started; retry with backoff');
  }
}

/** A released job's workflow may still be running somewhere: it must not finish the job later. */
async function terminateWorkflow(deps: AppDeps, tenantId: string, exportId: string): Promise<void> {
  try {
    await deps.temporal?.workflow.getHandle(recordingExportWorkflowId(tenantId, exportId)).terminate(STALE_CLAIM_ERROR);
  } catch (err) {
    deps.logger.info({ tenantId, exportId, err: (err as Error).message }, 'stale recording export had no running workflow');
  }
}

export async function getExport(deps: AppDeps, tenantId: string, exportId: string) {
  const view = await withTenantSql(deps.db, tenantId, async (sql) => {
    const row = await findExport(sql, tenantId, exportId);
    return row ? exportJobView(row, await signedArchiveUrl(deps, sql, tenantId, row)) : null;
  });
  if (!view) throw notFound();
  return view;
}
