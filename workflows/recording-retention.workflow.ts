import { condition, continueAsNew, defineSignal, proxyActivities, setHandler, workflowInfo } from '@temporalio/workflow';
import type { RecordingActivities } from '../activities/recording.activities';

/**
 * Per task queue, like the webhook dispatcher: every deployment (and every test worker) sharing a
 * Temporal namespace sweeps from its own worker.
 */
export const RECORDING_RETENTION_ID = 'recording-retention';
export function recordingRetentionWorkflowId(taskQueue: string): string {
  return `${RECORDING_RETENTION_ID}:${taskQueue}`;
}

/** Default time between sweeps. Retention is counted in whole days, so an hour is ample. */
export const RETENTION_SWEEP_MS = 60 * 60 * 1000;
/** Rows per purge call; a full page is followed by another call in the same sweep. */
export const PURGE_BATCH = 200;
/** A sweep stops after this many full pages and goes on at the next one (bounds one sweep's history). */
export const MAX_BATCHES_PER_SWEEP = 50;
/** Continue-as-new after this many sweeps (or sooner when Temporal suggests it): bounded history. */
export const SWEEPS_PER_RUN = 100;

const { purgeDueRecordings } = proxyActivities<RecordingActivities>({
  // A batch is PURGE_BATCH store deletes and row updates; retried forever: a store outage only delays purges.
  startToCloseTimeout: '10 minutes',
  retry: { initialInterval: '5 seconds', maximumInterval: '5 minutes', backoffCoefficient: 2 },
});

/** Sweep now (an operator, a test): ends the current wait. */
export const recordingRetentionSweepSignal = defineSignal('sweep');

export interface RecordingRetentionInput {
  sweepIntervalMs?: number;
  batchSize?: number;
  sweepsPerRun?: number;
}

/**
 * The recording retention loop: purges the audio of every recording past its retained_until that
 * is not under legal hold (the metadata row stays), then waits for the next sweep.
 */
export async function recordingRetentionWorkflow(input: RecordingRetentionInput = {}): Promise<void> {
  const interval = input.sweepIntervalMs ?? RETENTION_SWEEP_MS;
  const limit = input.batchSize ?? PURGE_BATCH;
  let woken = false;
  setHandler(recordingRetentionSweepSignal, () => {
    woken = true;
  });

  for (let sweeps = 1; ; sweeps += 1) {
    for (let batch = 0; batch < MAX_BATCHES_PER_SWEEP; batch += 1) {
      const result = await purgeDueRecordings({ limit });
      if (!result.more) break;
    }
    await condition(() => woken, interval);
    woken = false;
    if (sweeps >= (input.sweepsPerRun ?? SWEEPS_PER_RUN) || workflowInfo().continueAsNewSuggested) {
      await continueAsNew<typeof recordingRetentionWorkflow>(input);
    }
  }
}
