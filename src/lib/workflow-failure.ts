import { ApplicationFailure } from '@temporalio/common';

/**
 * The ApplicationFailure somewhere in a workflow failure's cause chain (WorkflowFailedError →
 * ActivityFailure → ApplicationFailure), so a route can map an activity's typed refusal back to
 * its HTTP error.
 */
export function applicationFailureOf(err: unknown): ApplicationFailure | null {
  let e: unknown = err;
  for (let i = 0; i < 8 && e instanceof Error; i += 1) {
    if (e instanceof ApplicationFailure) return e;
    e = (e as { cause?: unknown }).cause;
  }
  return null;
}
