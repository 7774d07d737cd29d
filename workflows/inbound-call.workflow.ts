import { condition, defineSignal, patched, proxyActivities, setHandler } from '@temporalio/workflow';
import type { InboundActivities, InboundCallInput, InboundCallResult, InboundEventSignalName, InboundOutcome, InboundRecordingStart, InboundSignal } from '../src/contracts/inbound-call';
import type { RecordingActivities } from '../activities/recording.activities';
import { promptAt, resolveKey } from './call-flow';

// connectInboundAgent, the longest step, waits at most 15 s for a seat plus its leg's answer.
const acts = proxyActivities<InboundActivities>({
  startToCloseTimeout: '40 seconds',
  retry: { initialInterval: '200 milliseconds', maximumInterval: '5 seconds', maximumAttempts: 10 },
});

// The audio must never be lost: a store outage delays the capture, retried without limit.
const recordingCapture = proxyActivities<RecordingActivities>({
  startToCloseTimeout: '10 minutes',
  retry: { initialInterval: '1 second', maximumInterval: '1 minute', backoffCoefficient: 2 },
});

/** How long an inbound menu waits for a key after its prompt before it hangs up. */
export const INBOUND_MENU_KEY_WAIT_MS = 10_000;
/** Menus deeper than this end the call: a loop in a menu must not keep a caller forever. */
const MAX_MENU_STEPS = 20;

const INBOUND_EVENT: InboundEventSignalName = 'inboundEvent';
export const inboundEventSignal = defineSignal<[InboundSignal]>(INBOUND_EVENT);

/**
 * One inbound call (id `inbound-call:<tenant>:<call uuid>`, started by the worker's relay when the
 * switch parks a call to a routed DID): its CDR row (direction inbound), then per route: `agent`
 * answers and bridges the seat dest_ref names (any reachable seat without one); `ivr` answers and
 * runs the menu of the campaign dest_ref names; `queue` answers and takes the first reachable seat
 * when the tenant's inbound_queue_stream_enabled is on, and otherwise ends the leg unanswered. A
 * route with `recording` (an ivr route also when its campaign has record_calls) records from the
 * answer, the consent notice first where all-party consent applies. The call's final row is
 * written at the hangup.
 */
export async function inboundCallWorkflow(input: InboundCallInput): Promise<InboundCallResult> {
  const seen = new Set<string>();
  const digits: Array<Extract<InboundSignal, { kind: 'dtmf' }>> = [];
  let hangup: Extract<InboundSignal, { kind: 'hangup' }> | null = null;
  setHandler(inboundEventSignal, (event) => {
    if (seen.has(event.seq)) return;
    seen.add(event.seq);
    if (event.kind === 'hangup') hangup = event;
    else digits.push(event);
  });

  const opened = await acts.openInboundCall(input);
  const ref = { tenantId: input.tenantId, callAttemptId: opened.callAttemptId, callUuid: input.callUuid };
  let outcome: InboundOutcome = 'gone';
  let agentId: string | null = null;
  let recording: InboundRecordingStart | null = null;
  const gone = () => hangup !== null;

  const connect = async (extension: string | null, transferFrom?: 'menu') => {
    const result = await acts.connectInboundAgent({ ...ref, extension, ...(transferFrom ? { transferFrom } : {}) });
    if (result.status === 'connected') {
      agentId = result.agentId;
      outcome = 'answered';
    } else if (result.status === 'no_agent') {
      outcome = 'no_agent';
      await acts.hangupInboundCall({ ...ref, cause: 'NORMAL_CLEARING' });
    }
  };

  const menu = async () => {
    const root = await acts.loadInboundMenu({ ...ref, campaignId: input.destRef });
    outcome = 'no_agent';
    if (!root) return acts.hangupInboundCall({ ...ref, cause: 'NORMAL_CLEARING' });
    let path = '';
    for (let step = 0; step < MAX_MENU_STEPS && !gone(); step += 1) {
      await acts.speakInboundMenu({ ...ref, text: promptAt(root, path, null) ?? '' });
      const pressed = await condition(() => digits.length > 0 || gone(), INBOUND_MENU_KEY_WAIT_MS);
      if (gone()) return;
      if (!pressed) break;
      const key = digits.shift()!;
      const next = resolveKey(root, path, key.digit, null);
      if (next.kind === 'optout') {
        await acts.optOutInboundCaller({ ...ref, digit: key.digit, at: key.at });
        break;
      }
      if (next.kind === 'action' && next.action === 'transfer_agent') return connect(null, 'menu');
      if (next.kind === 'action') break;
      if (next.kind === 'submenu') path = next.path;
    }
    await acts.hangupInboundCall({ ...ref, cause: 'NORMAL_CLEARING' });
  };

  if (input.destType === 'queue' && !input.queueStreamEnabled) {
    // SPEC InboundRoute: without the tenant's queue flag the leg ends unanswered.
    outcome = 'queue_disabled';
    await acts.hangupInboundCall({ ...ref, cause: 'NORMAL_TEMPORARY_FAILURE' });
  } else if (!gone() && (await acts.answerInboundCall(ref))) {
    outcome = 'no_agent';
    // An ivr route also records when the campaign whose menu it runs records its calls: the
    // recording service reads both, so the session asks it for every ivr call.
    const mayRecord = input.recording || (input.destType === 'ivr' && patched('inbound-call-ivr-campaign-recording-20261127'));
    if (mayRecord && !gone()) recording = await acts.startInboundRecording(ref).catch(() => null);
    if (gone()) outcome = 'gone';
    else if (input.destType === 'ivr') await menu();
    else await connect(input.destType === 'agent' ? input.destRef : null);
  }

  const ended = await condition(() => hangup !== null, input.idleMs);
  const end = ended ? hangup! : null;
  const answeredAt = end?.answeredAt ?? null;
  // Open vocabulary (SPEC CallAttempt): a caller answered by a seat is answered_human.
  const disposition = outcome === 'queue_disabled' ? 'not_admitted' : answeredAt === null ? 'canceled' : agentId !== null ? 'answered_human' : 'no_agent';
  await acts.finishInboundCall({
    ...ref,
    endedAt: end?.at ?? new Date().toISOString(),
    answeredAt,
    disposition,
    hangupCause: end?.cause ?? 'NORMAL_CLEARING',
    sipCode: end?.sipCode ?? null,
    agentId,
  });
  if (recording) await recordingCapture.captureCallRecording({ ...ref, ...recording });
  return { callAttemptId: ref.callAttemptId, outcome, agentId, disposition };
}
