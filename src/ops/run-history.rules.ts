import { temporal } from '@temporalio/proto';

/** What the rules read of a history event (IHistoryEvent carries a Long id; tests write plain numbers). */
export interface HistoryEventLike {
  eventId?: number | { toNumber(): number } | null;
  eventType?: number | null;
}
const EventType = temporal.api.enums.v1.EventType;

/**
 * Events that mean the run went wrong. An activity that is still retrying is not in the history
 * (only its final failure or timeout is), so a run looping on a failing tick shows here only once
 * the retry policy gives up; describe()'s pending activities show the retries before that.
 */
const FAILURES: ReadonlySet<number> = new Set([
  EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED,
  EventType.EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT,
  EventType.EVENT_TYPE_ACTIVITY_TASK_FAILED,
  EventType.EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT,
  EventType.EVENT_TYPE_WORKFLOW_EXECUTION_FAILED,
  EventType.EVENT_TYPE_WORKFLOW_EXECUTION_TIMED_OUT,
]);

/** The points Temporal accepts as a reset's workflowTaskFinishEventId. */
const RESET_POINTS: ReadonlySet<number> = new Set([
  EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED,
  EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED,
  EventType.EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT,
  EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED,
]);

export function eventIdOf(event: HistoryEventLike): number {
  const id = event.eventId;
  if (id === null || id === undefined) return 0;
  return typeof id === 'number' ? id : id.toNumber();
}

export function eventTypeName(event: HistoryEventLike): string {
  return EventType[event.eventType ?? 0] ?? String(event.eventType);
}

export interface ResetPoint<E extends HistoryEventLike> {
  event: E;
  eventId: number;
  /** The failure the point precedes, null when the run never failed. */
  firstFailure: { eventId: number; type: string } | null;
}

/**
 * The last healthy point of a run: the last WorkflowTaskCompleted before its first failure event,
 * or, in a run that never failed, its last WorkflowTaskCompleted (a reset there restarts the run
 * from its latest decision with the signals after it re-applied). Null when no workflow task
 * completed before the first failure: there is no healthy state to go back to.
 */
export function lastHealthyPoint<E extends HistoryEventLike>(events: readonly E[]): ResetPoint<E> | null {
  let candidate: E | null = null;
  for (const event of events) {
    if (FAILURES.has(event.eventType ?? 0)) {
      if (!candidate) return null;
      return { event: candidate, eventId: eventIdOf(candidate), firstFailure: { eventId: eventIdOf(event), type: eventTypeName(event) } };
    }
    if (event.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED) candidate = event;
  }
  return candidate ? { event: candidate, eventId: eventIdOf(candidate), firstFailure: null } : null;
}

/** An event id an operator chose: it must exist in the run and be a workflow-task event. */
export function chosenResetPoint<E extends HistoryEventLike>(events: readonly E[], eventId: number): { event: E } | { refused: string } {
  const event = events.find((e) => eventIdOf(e) === eventId);
  if (!event) return { refused: `event ${eventId} is not in the run's history (it has ${events.length} events)` };
  if (!RESET_POINTS.has(event.eventType ?? 0)) {
    return { refused: `event ${eventId} is ${eventTypeName(event)}; a reset point is a WorkflowTaskCompleted (or WorkflowTaskStarted/Failed/TimedOut) event` };
  }
  return { event };
}
