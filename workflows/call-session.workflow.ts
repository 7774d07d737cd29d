import { condition, defineSignal, patched, proxyActivities, setHandler, startChild, type ChildWorkflowHandle } from '@temporalio/workflow';
import type { DialerActivities } from '../activities/dialer.activities';
import type { RecordingActivities } from '../activities/recording.activities';
import type { CallContext, CallEventSignalName, CallSessionInput, CallSignal } from '../src/contracts/call-session';
import type { AiCallActivities } from '../src/contracts/ai-call';
import { aiCallWorkflow, aiHangupSignal, aiSpeechSignal, aiSpokenSignal } from './ai-call.workflow';
import { abandonedWaiting, resolveKey } from './call-flow';
import { aiCallWorkflowId } from './ids';

// connectAgent, the longest step, waits at most the 2 s abandonment window plus an agent leg's answer.
const acts = proxyActivities<DialerActivities>({
  startToCloseTimeout: '20 seconds',
  retry: { initialInterval: '200 milliseconds', maximumInterval: '5 seconds', maximumAttempts: 10 },
});

// Up to two sayings of the consent notice (NOTICE_WAIT_MS each) come before the recording runs.
const recordingStart = proxyActivities<RecordingActivities>({
  startToCloseTimeout: '45 seconds',
  retry: { initialInterval: '200 milliseconds', maximumInterval: '5 seconds', maximumAttempts: 5 },
});

// The audio must never be lost: a store outage delays the capture, retried without limit.
const recordingCapture = proxyActivities<RecordingActivities>({
  startToCloseTimeout: '10 minutes',
  retry: { initialInterval: '1 second', maximumInterval: '1 minute', backoffCoefficient: 2 },
});

// Metering must not be lost: retried until the store answers.
const aiMetering = proxyActivities<AiCallActivities>({
  startToCloseTimeout: '20 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '1 minute', backoffCoefficient: 2 },
});

/** How long a menu waits for a key after its prompt before it hangs up. */
export const MENU_KEY_WAIT_MS = 10_000;

const CALL_EVENT: CallEventSignalName = 'callEvent';
export const callEventSignal = defineSignal<[CallSignal]>(CALL_EVENT);

/**
 * Follows one consumer call from its switch events (id `call:<tenant>:<call uuid>`, started by the
 * first event): records the answer, waits for the AMD verdict where it applies, connects an agent
 * (or abandons with the seller identification message), plays messages and menus, records keys,
 * honours the opt-out digit, and writes the call's final row at hangup. Events are deduplicated by
 * the switch's event sequence, so two relays reporting the same event change nothing.
 */
export async function callSessionWorkflow(input: CallSessionInput): Promise<{ disposition: string | null }> {
  const queue: CallSignal[] = [];
  const seen = new Set<string>();
  setHandler(callEventSignal, (event) => {
    if (seen.has(event.seq)) return;
    seen.add(event.seq);
    queue.push(event);
  });

  const ref = { tenantId: input.tenantId, callAttemptId: input.callAttemptId, callUuid: input.callUuid };
  let ctx: CallContext | null = null;
  const context = async (): Promise<CallContext> => (ctx ??= await acts.loadCallContext(ref));
  let answeredAt: string | null = null;
  let amdVerdict: string | null = null;
  let treated = false;
  let agentId: string | null = null;
  let abandoned = false;
  // When the consumer began waiting for an agent (the answer of an agent call, a menu's transfer).
  let waitingSince: number | null = null;
  let ending = false;
  let menuPath = '';
  let awaitingKey = false;
  let keySeq = 0;
  let ai: ChildWorkflowHandle<typeof aiCallWorkflow> | null = null;
  let recording = null as { startedAt: string; twoPartyConsentState: string | null; consentNoticePlayed: boolean } | null;
  // One recording decision per call: a menu that transfers to an agent keeps the recording begun
  // at the answer (or the decision not to record) rather than deciding again at the bridge.
  let recordingDecided = false;
  // Ends of speech the relay will report for the consent notice: they are not the end of a
  // message, a menu prompt or an AI turn, so they are dropped before those are looked at.
  let noticeEchoes = 0;

  const hangup = async () => {
    if (ending) return;
    ending = true;
    await acts.hangupCall(ref);
  };

  // An agent campaign's call is recorded from the agent bridge: the consumer must reach the agent
  // within the abandonment window, which leaves no time for a consent notice before it. Every
  // other treatment records from the answer (see treat). A recording that cannot be started
  // leaves the call unrecorded rather than ending the session without its final row.
  const startRecording = async (identityFirst: boolean) => {
    if (recording || recordingDecided || ending || !patched('recording-capture')) return;
    const started = await recordingStart.startCallRecording(identityFirst ? { ...ref, identityFirst } : ref).catch(() => null);
    if (started?.status === 'recording') {
      recording = { startedAt: started.startedAt, twoPartyConsentState: started.twoPartyConsentState, consentNoticePlayed: started.consentNoticePlayed };
      // Histories written before the activity counted its notices carry no count.
      noticeEchoes += started.noticeSpeeches ?? 0;
    }
  };

  // The consumer waits at most the abandonment window for an agent, counted from the answer or,
  // for a menu's transfer, from the key press: a caller who listened to the menu for a while
  // and then asks for someone must not be abandoned at once because the answer is long past.
  const connect = async (since: string | null, transferFrom?: 'menu') => {
    waitingSince = Date.parse(since ?? new Date().toISOString());
    const result = await acts.connectAgent({
      ...ref,
      windowStartMs: waitingSince,
      agentDomain: input.agentDomain,
      agentId: input.agentId,
      ...(transferFrom ? { transferFrom } : {}),
    });
    if (result.status === 'connected') {
      agentId = result.agentId;
      await startRecording(false);
    }
    // The identification message plays; the consumer or the message's end closes the call.
    if (result.status === 'abandoned') abandoned = true;
  };

  // The AI side of an ai_voice call runs as its own workflow; this session relays it the speech
  // and the hang-up and writes the call's final row once it is done.
  const startAi = async () => {
    if (ai || !answeredAt || !patched('call-session-ai-voice-20261124')) return;
    ai = await startChild(aiCallWorkflow, {
      workflowId: aiCallWorkflowId(input.tenantId, input.callUuid),
      args: [{ ...ref, answeredAt }],
    });
  };
  const toAi = async (send: (h: ChildWorkflowHandle<typeof aiCallWorkflow>) => Promise<void>) => {
    // A finished AI workflow takes no more signals; what it missed no longer matters.
    if (ai) await send(ai).catch(() => undefined);
  };

  const treat = async () => {
    if (treated || ending) return;
    treated = true;
    const c = await context();
    // A message, a menu or an AI call is recorded from the answer (after the AMD verdict where
    // AMD runs), before the call says anything (where a consent notice is due: the caller's
    // identity, then the notice, then the recording): the recording holds the whole consumer
    // leg, an AI call's handoff to a person included (the bridge keeps the consumer's channel,
    // and so its one recording).
    if (c.treatment !== 'agent' && c.treatment !== 'none' && patched('call-session-record-from-answer-20261127')) {
      await startRecording(true);
      recordingDecided = true;
    }
    if (c.treatment === 'agent') await connect(answeredAt);
    else if (c.treatment === 'ai') await startAi();
    // A prompt that cannot be played (the consumer hung up meanwhile, the switch refused it) must
    // not fail the session: its hang-up event, or the reaper, still writes the call's final row.
    else if (c.treatment === 'message' && c.campaignId) await acts.playMessage({ ...ref, campaignId: c.campaignId }).catch(() => undefined);
    else if (c.treatment === 'menu' && c.campaignId) {
      awaitingKey = true;
      await acts.playMenu({ ...ref, campaignId: c.campaignId, menuPath }).catch(() => undefined);
    }
  };

  for (;;) {
    const waitMs = awaitingKey ? MENU_KEY_WAIT_MS : input.idleMs;
    const got = await condition(() => queue.length > 0, waitMs);
    if (!got) {
      if (!awaitingKey) return { disposition: null };
      awaitingKey = false;
      await hangup();
      continue;
    }
    const event = queue.shift()!;
    switch (event.kind) {
      case 'answered': {
        answeredAt = event.at;
        await acts.markAnswered(ref, event.at);
        const c = await context();
        // The window runs from the answer even while an AMD verdict holds the connect back.
        if (c.treatment === 'agent') waitingSince = Date.parse(event.at);
        // Without AMD, or with AMD but no deferred bridge on an agent call, the consumer is
        // connected at once; otherwise the call waits for a human verdict.
        if (!c.amd || (c.treatment === 'agent' && !c.deferredBridge)) await treat();
        break;
      }
      case 'amd': {
        amdVerdict = event.verdict;
        if (event.verdict === 'MACHINE') await hangup();
        else await treat();
        break;
      }
      case 'dtmf': {
        const c = await context();
        const outcome = resolveKey(c.ivrMenu, menuPath, event.digit, c.optoutDigit);
        const interactive = c.treatment === 'menu';
        const action =
          outcome.kind === 'optout' ? 'optout' : !interactive ? null : outcome.kind === 'action' ? outcome.action : outcome.kind === 'submenu' ? 'submenu' : null;
        if (interactive || outcome.kind === 'optout') {
          await acts.recordKeypress({ ...ref, campaignId: c.campaignId, seq: keySeq, digit: event.digit, menuPath, action, pressedAt: event.at });
          keySeq += 1;
        }
        if (outcome.kind === 'optout') {
          await acts.optOutByDigit({ ...ref, digit: event.digit, at: event.at });
          await hangup();
        } else if (interactive && outcome.kind === 'action') {
          awaitingKey = false;
          if (outcome.action === 'hangup') await hangup();
          else await connect(event.at, 'menu');
        } else if (interactive && outcome.kind === 'submenu' && c.campaignId) {
          menuPath = outcome.path;
          awaitingKey = true;
          await acts.playMenu({ ...ref, campaignId: c.campaignId, menuPath });
        }
        break;
      }
      case 'playback_done': {
        if (noticeEchoes > 0) {
          noticeEchoes -= 1;
          break;
        }
        const c = ctx as CallContext | null;
        if (ai) await toAi((h) => h.signal(aiSpokenSignal));
        else if (abandoned || c?.treatment === 'message') await hangup();
        break;
      }
      case 'speech': {
        await toAi((h) => h.signal(aiSpeechSignal, { seq: event.seq, text: event.text, at: event.at }));
        break;
      }
      case 'hangup': {
        const aiCall = ai as ChildWorkflowHandle<typeof aiCallWorkflow> | null;
        if (aiCall) {
          await toAi((h) => h.signal(aiHangupSignal, { at: event.at }));
          const done = await aiCall.result().catch(() => null);
          agentId = done?.agentId ?? agentId;
          const answered = answeredAt ?? event.answeredAt;
          if (answered) await aiMetering.meterAiCall({ ...ref, answeredAt: answered, endedAt: event.at });
        }
        const result = await acts.finalizeCall({
          ...ref,
          facts: {
            hangupCause: event.cause,
            answered: answeredAt !== null || event.answeredAt !== null,
            amdVerdict,
            abandoned: abandoned || abandonedWaiting({ waitingSince, agentId, hangupAt: event.at }),
          },
          endedAt: event.at,
          answeredAt: answeredAt ?? event.answeredAt,
          sipResponseCode: event.sipCode,
          agentId,
        });
        if (recording) await recordingCapture.captureCallRecording({ ...ref, ...recording });
        return { disposition: result.disposition };
      }
    }
  }
}
