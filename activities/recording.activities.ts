import { Context } from '@temporalio/activity';
import type { AppDeps } from '../src/deps';
import { captureCallRecording, startCallRecording, type CaptureInput, type RecordingStartInput } from '../src/modules/recordings/recording-capture.service';
import { purgeDueRecordings } from '../src/modules/recordings/recording-retention.service';

/** The attempt number of the running activity (1 outside one: tests, benches). */
function attemptNumber(): number {
  try {
    return Context.current().info.attempt;
  } catch {
    return 1;
  }
}

/**
 * Call recording: start it at the conversation or the answer (switch commands), capture it at the call's end
 * (spool → object store → recording row), and the retention sweep's purge. Store and switch faults
 * are transient and left to the retry policy; every step is safe to repeat.
 */
export function createRecordingActivities(deps: AppDeps) {
  return {
    startCallRecording: (ref: RecordingStartInput) => startCallRecording(deps, ref),
    captureCallRecording: (input: CaptureInput) => captureCallRecording(deps, input, attemptNumber()),
    purgeDueRecordings: (input: { limit: number }) => purgeDueRecordings(deps, input),
  };
}

export type RecordingActivities = ReturnType<typeof createRecordingActivities>;
