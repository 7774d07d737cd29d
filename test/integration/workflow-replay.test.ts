import { bundleWorkflowCode, DefaultLogger, Worker, type ReplayWorkerOptions } from '@temporalio/worker';
import { DeterminismViolationError } from '@temporalio/workflow';
import * as workflows from '../../workflows';
import { WORKFLOWS_PATH } from '../../workers/worker';
import { historyFromJson, loadHistoryFixtures, type HistoryEventJson, type HistoryFixture } from '../helpers/workflow-histories';

/**
 * Workflow types without a recorded history, each for a reason given in docs/workflow-versioning.md.
 * A new workflow type fails this suite until it gets a fixture or a line here.
 */
const NOT_RECORDED = ['smokeWorkflow', 'recordingExportWorkflow', 'aiAgentLifecycleWorkflow', 'billingEnforcementWorkflow'];

const fixtures = loadHistoryFixtures();

async function replayAll(histories: HistoryFixture[]): Promise<Array<Error | undefined>> {
  // The bundle global setup built from workflows/index.ts at the start of this run is the current
  // code; bundling again only when this file runs outside the integration project's setup.
  const workflowBundle = process.env.TEST_WORKFLOW_BUNDLE
    ? { codePath: process.env.TEST_WORKFLOW_BUNDLE }
    : { code: (await bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, logger: new DefaultLogger('WARN') })).code };
  const options: ReplayWorkerOptions = { workflowBundle };
  const errors: Array<Error | undefined> = [];
  const input = histories.map((f) => ({ workflowId: f.workflowId, history: historyFromJson(f.history) }));
  for await (const result of Worker.runReplayHistories(options, input)) errors.push(result.error);
  return errors;
}

/** A copy of the history with its first scheduled activity under another name: code that no longer matches it. */
function withRenamedActivity(fixture: HistoryFixture): HistoryFixture | null {
  const copy = structuredClone(fixture);
  const scheduled = copy.history.events.find((e: HistoryEventJson) => e.activityTaskScheduledEventAttributes);
  if (!scheduled) return null;
  const attrs = scheduled.activityTaskScheduledEventAttributes as { activityType: { name: string } };
  attrs.activityType.name = `${attrs.activityType.name}Renamed`;
  return copy;
}

const recordedTypes = [...new Set(fixtures.map((f) => f.fixture.workflowType))].sort();
// One mutated history per workflow type that schedules an activity: each type's replay can fail.
const mutated = recordedTypes.flatMap((type) => {
  const copy = fixtures.filter((f) => f.fixture.workflowType === type).map((f) => withRenamedActivity(f.fixture)).find((c) => c !== null);
  return copy ? [{ type, fixture: copy }] : [];
});

let replayed: Array<Error | undefined>;
let replayedMutated: Array<Error | undefined>;

beforeAll(async () => {
  replayed = await replayAll(fixtures.map((f) => f.fixture));
  replayedMutated = await replayAll(mutated.map((m) => m.fixture));
});

describe('recorded workflow histories replay against the current workflow code', () => {
  it('has fixtures for every workflow type but the ones listed as not recorded', () => {
    const registered = Object.keys(workflows).sort();
    expect(recordedTypes).toEqual(registered.filter((t) => !NOT_RECORDED.includes(t)));
  });

  it.each(fixtures.map((f, i) => [f.file, i] as const))('%s replays without a determinism violation or other failure', (_file, i) => {
    expect(replayed[i]).toBeUndefined();
  });

  it.each(mutated.map((m, i) => [m.type, i] as const))('%s: a copy with its first activity renamed fails replay as nondeterministic', (_type, i) => {
    expect(replayedMutated[i]).toBeInstanceOf(DeterminismViolationError);
  });
});
