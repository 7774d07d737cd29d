import { ActivityFailure, ApplicationFailure, proxyActivities } from '@temporalio/workflow';
import type { RecordingExportActivities, RecordingExportRef } from '../activities/recording-export.activities';

/** Business key: one workflow per export job. */
export const recordingExportWorkflowId = (tenantId: string, exportId: string) => `recording-export:${tenantId}:${exportId}`;

const { claimRecordingExport, failRecordingExport } = proxyActivities<RecordingExportActivities>({
  startToCloseTimeout: '30 seconds',
  // A database outage must delay the bookkeeping, not lose it.
  retry: { maximumInterval: '1 minute' },
});

const { buildRecordingExport } = proxyActivities<RecordingExportActivities>({
  startToCloseTimeout: '6 hours',
  // The activity heartbeats between archive entries: a dead worker is noticed in a minute, not hours.
  heartbeatTimeout: '1 minute',
  // A store that stays down fails the job after a few minutes rather than holding the tenant's one slot.
  retry: { initialInterval: '5 seconds', maximumInterval: '1 minute', maximumAttempts: 5 },
});

export interface RecordingExportResult {
  status: 'done' | 'failed' | 'not_claimed';
  rowCount: number | null;
}

/** The job's error text: a fixed sentence per cause, never the backend's message (it can name hosts and keys). */
function errorOf(err: unknown): string {
  const cause = err instanceof ActivityFailure ? err.cause : err;
  const type = cause instanceof ApplicationFailure ? cause.type : null;
  if (type === 'StorageUnavailableError') return 'the object store was unavailable; request the export again';
  return 'the export could not be produced; request it again';
}

/**
 * One export job (id recordingExportWorkflowId): claim it, stream the archive, and fail the job
 * with a reason when the build gives up. A job released as stale meanwhile is left as the release
 * left it.
 */
export async function recordingExportWorkflow(input: RecordingExportRef): Promise<RecordingExportResult> {
  const { claimed } = await claimRecordingExport(input);
  if (!claimed) return { status: 'not_claimed', rowCount: null };
  try {
    const { rowCount } = await buildRecordingExport(input);
    return { status: 'done', rowCount };
  } catch (err) {
    const cause = err instanceof ActivityFailure ? err.cause : err;
    if (cause instanceof ApplicationFailure && cause.type === 'RecordingExportClaimLost') return { status: 'not_claimed', rowCount: null };
    await failRecordingExport({ ...input, error: errorOf(err) });
    return { status: 'failed', rowCount: null };
  }
}
