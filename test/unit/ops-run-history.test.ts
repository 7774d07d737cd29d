import { temporal } from '@temporalio/proto';
import { chosenResetPoint, lastHealthyPoint } from '../../src/ops/run-history.rules';

const T = temporal.api.enums.v1.EventType;
const history = (...types: number[]) => types.map((eventType, i) => ({ eventId: i + 1, eventType }));

const STARTED = T.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED;
const WFT_SCHEDULED = T.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED;
const WFT_STARTED = T.EVENT_TYPE_WORKFLOW_TASK_STARTED;
const WFT_COMPLETED = T.EVENT_TYPE_WORKFLOW_TASK_COMPLETED;
const WFT_FAILED = T.EVENT_TYPE_WORKFLOW_TASK_FAILED;
const ACT_SCHEDULED = T.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED;
const ACT_STARTED = T.EVENT_TYPE_ACTIVITY_TASK_STARTED;
const ACT_COMPLETED = T.EVENT_TYPE_ACTIVITY_TASK_COMPLETED;
const ACT_FAILED = T.EVENT_TYPE_ACTIVITY_TASK_FAILED;
const TIMER = T.EVENT_TYPE_TIMER_STARTED;

describe('lastHealthyPoint', () => {
  it('is the last WorkflowTaskCompleted before the first failure', () => {
    const events = history(STARTED, WFT_SCHEDULED, WFT_STARTED, WFT_COMPLETED, ACT_SCHEDULED, ACT_STARTED, ACT_COMPLETED, WFT_SCHEDULED, WFT_STARTED, WFT_COMPLETED, ACT_SCHEDULED, ACT_STARTED, ACT_FAILED, WFT_SCHEDULED, WFT_STARTED, WFT_COMPLETED);
    const point = lastHealthyPoint(events);
    expect(point && { id: point.eventId, failure: point.firstFailure }).toEqual({ id: 10, failure: { eventId: 13, type: 'EVENT_TYPE_ACTIVITY_TASK_FAILED' } });
  });

  it('a failing workflow task counts as a failure too; later completions do not move the point', () => {
    const events = history(STARTED, WFT_SCHEDULED, WFT_STARTED, WFT_COMPLETED, TIMER, WFT_SCHEDULED, WFT_STARTED, WFT_FAILED, WFT_SCHEDULED, WFT_STARTED, WFT_COMPLETED);
    expect(lastHealthyPoint(events)?.eventId).toBe(4);
  });

  it('a run that never failed resets to its last WorkflowTaskCompleted', () => {
    const events = history(STARTED, WFT_SCHEDULED, WFT_STARTED, WFT_COMPLETED, ACT_SCHEDULED, ACT_STARTED, ACT_COMPLETED, WFT_SCHEDULED, WFT_STARTED, WFT_COMPLETED, TIMER);
    expect(lastHealthyPoint(events)).toMatchObject({ eventId: 10, firstFailure: null });
  });

  it('none when no workflow task completed before the first failure, or none ever did', () => {
    expect(lastHealthyPoint(history(STARTED, WFT_SCHEDULED, WFT_STARTED, WFT_FAILED, WFT_SCHEDULED, WFT_STARTED, WFT_COMPLETED))).toBeNull();
    expect(lastHealthyPoint(history(STARTED, WFT_SCHEDULED))).toBeNull();
  });
});

describe('chosenResetPoint', () => {
  const events = history(STARTED, WFT_SCHEDULED, WFT_STARTED, WFT_COMPLETED, ACT_SCHEDULED);

  it('accepts a workflow-task event of the run', () => {
    expect(chosenResetPoint(events, 4)).toEqual({ event: events[3] });
    expect(chosenResetPoint(events, 3)).toEqual({ event: events[2] });
  });

  it('refuses another event type or an id outside the history', () => {
    expect(chosenResetPoint(events, 5)).toEqual({ refused: expect.stringMatching(/^event 5 is EVENT_TYPE_ACTIVITY_TASK_SCHEDULED/) });
    expect(chosenResetPoint(events, 9)).toEqual({ refused: "event 9 is not in the run's history (it has 5 events)" });
  });
});
