import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { Client, Connection, type WorkflowExecutionInfo } from '@temporalio/client';
import * as proto from '@temporalio/proto';
import { patchProtobufRoot } from '@temporalio/proto/lib/patch-protobuf-root';

type History = proto.temporal.api.history.v1.IHistory;

/**
 * The SDK's historyToJSON / historyFromJSON (and runReplayHistories given JSON) fail here with
 * "type must be a Type": @temporalio/common and @temporalio/proto each carry their own protobufjs
 * copy, and protojson checks instanceof against the wrong one. Taking protojson from the copy
 * @temporalio/proto resolves gives the same canonical proto3 JSON (what the Temporal CLI and Web UI
 * export) and still works once the copies are deduplicated.
 */
const protojson = createRequire(require.resolve('@temporalio/proto'))('protobufjs/ext/protojson') as {
  toJson(type: unknown, message: unknown): unknown;
  fromJson(type: unknown, json: unknown): History | null;
};
const historyType = (patchProtobufRoot(proto) as unknown as { lookupType(name: string): unknown }).lookupType('temporal.api.history.v1.History');

function historyToJson(history: History): { events: HistoryEventJson[] } {
  return protojson.toJson(historyType, proto.temporal.api.history.v1.History.fromObject(history)) as { events: HistoryEventJson[] };
}

/** A decoded History, which the replayer takes as is. */
export function historyFromJson(json: { events: HistoryEventJson[] }): History {
  const history = protojson.fromJson(historyType, json);
  if (!history) throw new TypeError('not a workflow history');
  return history;
}

/** Committed histories that test/integration/workflow-replay.test.ts replays against the current workflow code. */
export const HISTORIES_DIR = path.resolve(__dirname, '../fixtures/workflow-histories');

/**
 * The most of one history that is kept: the fixtures are committed, and a long run says no more
 * about determinism than a short one with the same kinds of events.
 */
const MAX_FIXTURE_BYTES = 60_000;

export interface HistoryEventJson {
  eventId: string;
  eventType: string;
  [attributes: string]: unknown;
}

export interface HistoryFixture {
  workflowType: string;
  /** Replay passes it to the workflow (histories do not hold it, and workflows read it). */
  workflowId: string;
  runId: string;
  /** The test file that ran the workflow. */
  source: string;
  /** What the history exercises, as the recorder saw it (why it was picked). */
  features: string[];
  /** Set when the run was longer than what is kept (a prefix, see fitting()): its event count then. */
  eventsInRun?: number;
  history: { events: HistoryEventJson[] };
}

export interface StoredFixture {
  file: string;
  fixture: HistoryFixture;
}

export function loadHistoryFixtures(): StoredFixture[] {
  const types = readdirSync(HISTORIES_DIR, { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name).sort();
  return types.flatMap((type) =>
    readdirSync(path.join(HISTORIES_DIR, type))
      .filter((f) => f.endsWith('.json'))
      .sort()
      .map((f) => {
        const file = path.join(type, f);
        return { file, fixture: JSON.parse(readFileSync(path.join(HISTORIES_DIR, file), 'utf8')) as HistoryFixture };
      }),
  );
}

const short = (eventType: string) => eventType.replace(/^EVENT_TYPE_/, '');

/**
 * The kinds of things a history exercises: its event types, the activities it scheduled, the
 * signals and updates it took, activity retries, and how it closed. Picking histories that add
 * the most of these keeps the fixtures few but covering.
 */
function historyFeatures(events: HistoryEventJson[]): string[] {
  const features = new Set<string>();
  for (const e of events) {
    features.add(short(e.eventType));
    const scheduled = e.activityTaskScheduledEventAttributes as { activityType?: { name?: string } } | undefined;
    if (scheduled?.activityType?.name) features.add(`activity:${scheduled.activityType.name}`);
    const begun = e.workflowExecutionStartedEventAttributes as { continuedExecutionRunId?: string } | undefined;
    if (begun?.continuedExecutionRunId) features.add('CONTINUED_FROM_RUN');
    const started = e.activityTaskStartedEventAttributes as { attempt?: number } | undefined;
    if (started?.attempt && started.attempt > 1) features.add('ACTIVITY_RETRIED');
    const signaled = e.workflowExecutionSignaledEventAttributes as { signalName?: string } | undefined;
    if (signaled?.signalName) features.add(`signal:${signaled.signalName}`);
    const update = e.workflowExecutionUpdateAcceptedEventAttributes as { acceptedRequest?: { input?: { name?: string } } } | undefined;
    if (update?.acceptedRequest?.input?.name) features.add(`update:${update.acceptedRequest.input.name}`);
    const marker = e.markerRecordedEventAttributes as { markerName?: string; details?: Record<string, { payloads?: Array<{ data?: string }> }> } | undefined;
    if (marker?.markerName) features.add(`marker:${marker.markerName}`);
    const patchData = marker?.markerName === 'core_patch' ? marker.details?.['patch-data']?.payloads?.[0]?.data : undefined;
    if (patchData) features.add(`patch:${(JSON.parse(Buffer.from(patchData, 'base64').toString('utf8')) as { id: string }).id}`);
  }
  return [...features].sort();
}

interface Candidate {
  info: WorkflowExecutionInfo;
  events: HistoryEventJson[];
  features: string[];
  bytes: number;
  eventsInRun: number;
}

/**
 * A history within MAX_FIXTURE_BYTES: the whole one, or (a long-lived loop such as the webhook
 * dispatcher) its longest prefix that ends where the workflow was waiting, just before a workflow
 * task was scheduled. Such a prefix is exactly the history the run had at that moment, so it
 * replays like the history of an open workflow; nothing inside it is changed.
 */
function fitting(events: HistoryEventJson[]): HistoryEventJson[] {
  let bytes = 2;
  let end = 0;
  for (let i = 0; i < events.length; i += 1) {
    bytes += JSON.stringify(events[i]).length + 1;
    if (bytes > MAX_FIXTURE_BYTES) break;
    if (i + 1 === events.length || events[i + 1]!.eventType === 'EVENT_TYPE_WORKFLOW_TASK_SCHEDULED') end = i + 1;
  }
  return events.slice(0, end);
}

/**
 * Greedy cover: each pick is the history that adds the most features not yet covered (the
 * smaller one on a tie); a history that adds nothing is not picked.
 */
function pickCovering(candidates: Candidate[], count: number, covered = new Set<string>()): Candidate[] {
  const picked: Candidate[] = [];
  const pool = candidates.filter((c) => c.events.length > 0);
  while (picked.length < count) {
    let best: { c: Candidate; gain: number } | null = null;
    for (const c of pool) {
      if (picked.includes(c)) continue;
      const gain = c.features.filter((f) => !covered.has(f)).length;
      if (gain > 0 && (!best || gain > best.gain || (gain === best.gain && c.bytes < best.c.bytes))) best = { c, gain };
    }
    if (!best) break;
    picked.push(best.c);
    for (const f of best.c.features) covered.add(f);
  }
  return picked;
}

/**
 * A count of histories picked by cover, or at least one history having each listed feature (for
 * a path the cover might pass over), each adding the most to what the others cover.
 */
export type Pick = number | string[];

function choose(candidates: Candidate[], pick: Pick): Candidate[] {
  if (typeof pick === 'number') return pickCovering(candidates, pick);
  const chosen: Candidate[] = [];
  const covered = new Set<string>();
  for (const feature of pick) {
    if (chosen.some((c) => c.features.includes(feature))) continue;
    const [found] = pickCovering(candidates.filter((c) => c.features.includes(feature) && !chosen.includes(c)), 1, covered);
    if (!found) throw new Error(`no recorded history has ${feature}`);
    chosen.push(found);
  }
  return chosen;
}

/** One event a line: small enough to commit, and a re-recording diffs event by event. */
function serialize(fixture: HistoryFixture): string {
  const { history, ...head } = fixture;
  const events = history.events.map((e) => JSON.stringify(e)).join(',\n');
  return `${JSON.stringify(head).slice(0, -1)},"history":{"events":[\n${events}\n]}}\n`;
}


/**
 * With RECORD_WORKFLOW_HISTORIES=1, saves the most covering histories (as `picks` says per
 * workflow type) of the workflows that ran on `taskQueues` as
 * <workflowType>/<label>-<source>-<n>.json (label: WORKFLOW_HISTORY_LABEL, else the UTC day as
 * yyyymmdd); without it, does nothing. A recording replaces the files of the same label and
 * source and keeps the others: histories of earlier workflow code must keep replaying until no
 * run of that code can still be open (docs/workflow-versioning.md).
 * It talks to the test Temporal server on its own connection, so it may run after the test's worker
 * and app have stopped; workflows still open then are recorded as far as they got.
 */
export async function recordWorkflowHistories(source: string, taskQueues: string[], picks: Record<string, Pick>): Promise<void> {
  if (process.env.RECORD_WORKFLOW_HISTORIES !== '1') return;
  const connection = await Connection.connect({ address: process.env.TEST_TEMPORAL_ADDRESS! });
  try {
    const client = new Client({ connection, namespace: process.env.TEST_TEMPORAL_NAMESPACE ?? 'default' });
    // A second code version recorded on the same day needs its own label, or it would replace the first's files.
    const label = process.env.WORKFLOW_HISTORY_LABEL || new Date().toISOString().slice(0, 10).replace(/-/g, '');
    for (const [workflowType, pick] of Object.entries(picks)) {
      const candidates: Candidate[] = [];
      for (const taskQueue of taskQueues) {
        for await (const info of client.workflow.list({ query: `TaskQueue = '${taskQueue}' AND WorkflowType = '${workflowType}'` })) {
          const history = await client.workflow.getHandle(info.workflowId, info.runId).fetchHistory();
          const full = historyToJson(history).events;
          const events = fitting(full);
          candidates.push({ info, events, features: historyFeatures(events), bytes: JSON.stringify(events).length, eventsInRun: full.length });
        }
      }
      const chosen = choose(candidates, pick);
      if (chosen.length === 0) throw new Error(`${source}: no ${workflowType} history to record on ${taskQueues.join(', ')}`);
      const dir = path.join(HISTORIES_DIR, workflowType);
      mkdirSync(dir, { recursive: true });
      const stem = `${label}-${source}-`;
      for (const old of readdirSync(dir).filter((f) => f.startsWith(stem))) rmSync(path.join(dir, old));
      chosen.forEach((c, i) => {
        const fixture: HistoryFixture = {
          workflowType,
          workflowId: c.info.workflowId,
          runId: c.info.runId,
          source,
          features: c.features,
          ...(c.eventsInRun > c.events.length ? { eventsInRun: c.eventsInRun } : {}),
          history: { events: c.events },
        };
        writeFileSync(path.join(dir, `${stem}${i + 1}.json`), serialize(fixture));
      });
    }
  } finally {
    await connection.close();
  }
}
