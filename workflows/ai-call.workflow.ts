import { condition, defineQuery, defineSignal, patched, proxyActivities, setHandler } from '@temporalio/workflow';
import type { AiCallActivities, AiCallInput, AiCallResult, AiCallState, AiCallStateQueryName, AiHangupSignalName, AiSpeech, AiSpeechSignalName, AiSpokenSignalName, AiStop, AiStopSignalName, AiTakeover, AiTakeoverSignalName, AiTurnResult } from '../src/contracts/ai-call';

// Engine turns are one short transaction; the handoff waits for the person's leg to answer.
const acts = proxyActivities<AiCallActivities>({
  startToCloseTimeout: '40 seconds',
  retry: { initialInterval: '200 milliseconds', maximumInterval: '5 seconds', maximumAttempts: 10 },
});

/** Seconds of the budget kept for the closing line (a call is metered until it hangs up). */
export const BUDGET_GOODBYE_SECONDS = 5;

/** How long the closing line may take to play before the call is hung up anyway. */
export const GOODBYE_WAIT_MS = 30_000;

/** One consumer utterance: from the switch's recognizer (dd::speech, via the call session) or the product's audio gateway. */
export const aiSpeechSignal = defineSignal<[AiSpeech]>('aiSpeech' satisfies AiSpeechSignalName);
/** A prompt the AI queued finished playing. */
export const aiSpokenSignal = defineSignal('aiSpoken' satisfies AiSpokenSignalName);
/** The consumer leg is gone: stop at once, say nothing more. */
export const aiHangupSignal = defineSignal<[{ at: string }]>('aiHangup' satisfies AiHangupSignalName);
/** The tenant's kill switch: hand off if a person is free, else say goodbye and hang up. */
export const aiStopSignal = defineSignal<[AiStop]>('aiStop' satisfies AiStopSignalName);
/** A person takes the call over (POST /v1/ai/conversations/{id}/takeover, already audited). */
export const aiTakeoverSignal = defineSignal<[AiTakeover]>('aiTakeover' satisfies AiTakeoverSignalName);
export const aiCallStateQuery = defineQuery<AiCallState>('aiCallState' satisfies AiCallStateQueryName);

/**
 * The AI side of one answered ai_voice call (id `ai-call:<tenant>:<call uuid>`, a child of the
 * call session, which relays the consumer's speech and the hang-up). Greets through the engine,
 * then one engine turn per utterance, each spoken as it is stored. A durable timer holds the
 * tenant's ai_max_call_seconds_effective from the answer as a hard ceiling: at it the AI says its
 * closing line and the call is hung up whatever is going on (outcome max_duration). Ends when the
 * engine ends (after its last words played), on a handoff (bridged to a person, or a goodbye when
 * nobody is free), on the kill switch, on a takeover or when the consumer hangs up.
 */
export async function aiCallWorkflow(input: AiCallInput): Promise<AiCallResult> {
  const ref = { tenantId: input.tenantId, callAttemptId: input.callAttemptId, callUuid: input.callUuid };
  const utterances: AiSpeech[] = [];
  const seen = new Set<string>();
  let hungUpAt: string | null = null;
  let stop: AiStop | null = null;
  let takeover: AiTakeover | null = null;
  let played = 0;
  let queued = 0;
  let phase = 'greeting';
  let turns = 0;
  let outcome: string | null = null;
  let agentId: string | null = null;

  setHandler(aiSpeechSignal, (s) => {
    if (seen.has(s.seq)) return;
    seen.add(s.seq);
    utterances.push(s);
  });
  setHandler(aiSpokenSignal, () => {
    played += 1;
  });
  setHandler(aiHangupSignal, ({ at }) => {
    hungUpAt ??= at;
  });
  setHandler(aiStopSignal, (s) => {
    stop ??= s;
  });
  setHandler(aiTakeoverSignal, (t) => {
    takeover ??= t;
  });
  setHandler(aiCallStateQuery, () => ({ phase, turns, outcome }));

  const now = () => new Date(Date.now()).toISOString();
  const speak = async (r: AiTurnResult) => {
    if (!r.speaks || hungUpAt) return;
    queued += 1;
    await acts.speakAiTurn({ ...ref, conversationId: r.conversationId, turn: r.turn });
  };
  const waitForSpeech = () => condition(() => played >= queued || hungUpAt !== null, GOODBYE_WAIT_MS);
  const end = async (o: string, reason: string, goodbye: boolean, identify = false) => {
    outcome ??= o;
    const r = await acts.endAiConversation({ ...ref, outcome: o, reason, goodbye, at: now(), answeredAt: input.answeredAt, ...(identify ? { identify } : {}) });
    if (r.spoke) {
      queued += 1;
      await waitForSpeech();
    }
  };
  const handToPerson = async (target: { agentId: string | null; extension: string | null }): Promise<boolean> => {
    const person = await acts.bridgeAiCallToHuman({ ...ref, ...target });
    if (person) agentId = person.agentId;
    return person !== null;
  };
  const finish = async (cause: string) => {
    if (!hungUpAt) await acts.hangupAiCall({ ...ref, cause });
  };

  const begun = await acts.beginAiCall({ ...ref, answeredAt: input.answeredAt });
  const ceiling = Date.parse(input.answeredAt) + begun.maxSeconds * 1000;
  // The month's budget ends the talk like the ceiling, early enough for the goodbye to be paid by it too.
  const budgetEnds =
    begun.status === 'started' && typeof begun.budgetSeconds === 'number'
      ? Date.parse(input.answeredAt) + Math.max(0, begun.budgetSeconds - BUDGET_GOODBYE_SECONDS) * 1000
      : Number.POSITIVE_INFINITY;
  const deadline = Math.min(ceiling, budgetEnds);
  if (begun.status === 'refused') {
    // Placed before the kill switch (or the agent's pause) and answered after it: no AI speaks.
    phase = 'refused';
    outcome = begun.reason;
    if (!(await handToPerson({ agentId: null, extension: null }))) await finish('NORMAL_CLEARING');
    return { outcome, agentId };
  }
  // The consumer's leg reaches the audio gateway before the AI says anything (docs/ai-calls.md).
  // A call the AI cannot hear goes to a person; with nobody free it names itself, says goodbye and
  // ends: never an AI talking on without hearing the answers.
  if (patched('ai-call-audio-20261128')) {
    const fork = await acts.startAudioFork(ref);
    if (fork.status === 'failed') {
      phase = 'deaf';
      if (hungUpAt) await end('completed', 'consumer_hung_up', false);
      else if (await handToPerson({ agentId: null, extension: null })) await end('handoff', 'audio_unavailable', false);
      else {
        await end('completed', 'audio_unavailable', true, true);
        await finish('NORMAL_CLEARING');
      }
      return { outcome, agentId };
    }
  }
  await speak(begun);
  let last: AiTurnResult = begun;
  phase = 'talking';

  for (;;) {
    if (last.ended) {
      outcome = last.outcome;
      if (last.handoff) {
        phase = 'handoff';
        await waitForSpeech();
        if (hungUpAt) await end('handoff', 'consumer_hung_up', false);
        else if (await handToPerson({ agentId: null, extension: null })) await end('handoff', 'handoff', false);
        else {
          await end('handoff', 'no_agent_available', true);
          await finish('NORMAL_CLEARING');
        }
      } else {
        phase = 'ending';
        await waitForSpeech();
        await finish('NORMAL_CLEARING');
      }
      return { outcome, agentId };
    }
    const remaining = deadline - Date.now();
    const woke = remaining > 0 && (await condition(() => utterances.length > 0 || hungUpAt !== null || stop !== null || takeover !== null, remaining));
    if (hungUpAt) {
      await end('completed', 'consumer_hung_up', false);
      return { outcome, agentId };
    }
    if (!woke && budgetEnds < ceiling) {
      phase = 'budget';
      await end('completed', 'budget_exhausted', true);
      await finish('NORMAL_CLEARING');
      return { outcome, agentId };
    }
    if (!woke) {
      phase = 'ceiling';
      // The closing line is said before the hang-up (billing stops at the ceiling all the same).
      await end('max_duration', 'ceiling', patched('ai-call-audio-20261128'));
      await finish('ALLOTTED_TIMEOUT');
      return { outcome, agentId };
    }
    if (takeover) {
      phase = 'taken_over';
      outcome = 'taken_over';
      if (!(await handToPerson(takeover))) await finish('NORMAL_CLEARING');
      return { outcome, agentId };
    }
    if (stop) {
      phase = 'paused';
      if (await handToPerson({ agentId: null, extension: null })) {
        await end('paused', 'kill_switch_handoff', false);
      } else {
        await end('paused', 'kill_switch', true);
        await finish('NORMAL_CLEARING');
      }
      return { outcome: 'paused', agentId };
    }
    const u = utterances.shift()!;
    turns += 1;
    const heard = u.confidence === undefined ? {} : { confidence: u.confidence, startMs: u.startMs, endMs: u.endMs };
    const r = await acts.respondAiTurn({ ...ref, turn: turns, utterance: u.text, at: u.at, answeredAt: input.answeredAt, ...heard });
    if (!r) return { outcome, agentId };
    await speak(r);
    last = r;
  }
}
