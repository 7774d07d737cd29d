import { condition, defineSignal, proxyActivities, setHandler } from '@temporalio/workflow';
import type { DialerActivities } from '../activities/dialer.activities';
import type { CallContext } from '../src/modules/dialer/call-session.service';
import { resolveKey } from './call-flow';

// connectAgent, the longest step, waits at most the 2 s abandonment window plus an agent leg's answer.
const acts = proxyActivities<DialerActivities>({
  startToCloseTimeout: '20 seconds',
  retry: { initialInterval: '200 milliseconds', maximumInterval: '5 seconds', maximumAttempts: 10 },
});

/** What the switch reported about the call, relayed from its ESL events. */
export type CallSignal =
  | { kind: 'answered'; seq: string; at: string }
  | { kind: 'amd'; seq: string; verdict: string }
  | { kind: 'dtmf'; seq: string; digit: string; at: string }
  | { kind: 'playback_done'; seq: string }
  | { kind: 'hangup'; seq: string; at: string; cause: string; sipCode: number | null; answeredAt: string | null };

export interface CallSessionInput {
  tenantId: string;
  callAttemptId: string;
  callUuid: string;
  agentDomain: string | null;
  /** The agent a human-initiated dial named: only that agent takes the call. */
  agentId: string | null;
  /** With no event for this long the session ends; the run's reaper closes the call. */
  idleMs: number;
}

/** How long a menu waits for a key after its prompt before it hangs up. */
export const MENU_KEY_WAIT_MS = 10_000;

export const callEventSignal = defineSignal<[CallSignal]>('callEvent');

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
  let ending = false;
  let menuPath = '';
  let awaitingKey = false;
  let keySeq = 0;

  const hangup = async () => {
    if (ending) return;
    ending = true;
    await acts.hangupCall(ref);
  };

  // The consumer waits at most the abandonment window for an agent, counted from the answer or,
  // for a menu's transfer, from the key press: a caller who listened to the menu for a while
  // and then asks for someone must not be abandoned at once because the answer is long past.
  const connect = async (since: string | null) => {
    const result = await acts.connectAgent({
      ...ref,
      windowStartMs: Date.parse(since ?? new Date().toISOString()),
      agentDomain: input.agentDomain,
      agentId: input.agentId,
    });
    if (result.status === 'connected') agentId = result.agentId;
    // The identification message plays; the consumer or the message's end closes the call.
    if (result.status === 'abandoned') abandoned = true;
  };

  const treat = async () => {
    if (treated || ending) return;
    treated = true;
    const c = await context();
    if (c.treatment === 'agent') await connect(answeredAt);
    else if (c.treatment === 'message' && c.campaignId) await acts.playMessage({ ...ref, campaignId: c.campaignId });
    else if (c.treatment === 'menu' && c.campaignId) {
      awaitingKey = true;
      await acts.playMenu({ ...ref, campaignId: c.campaignId, menuPath });
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
          else await connect(event.at);
        } else if (interactive && outcome.kind === 'submenu' && c.campaignId) {
          menuPath = outcome.path;
          awaitingKey = true;
          await acts.playMenu({ ...ref, campaignId: c.campaignId, menuPath });
        }
        break;
      }
      case 'playback_done': {
        const c = ctx as CallContext | null;
        if (abandoned || c?.treatment === 'message') await hangup();
        break;
      }
      case 'hangup': {
        const result = await acts.finalizeCall({
          ...ref,
          facts: { hangupCause: event.cause, answered: answeredAt !== null || event.answeredAt !== null, amdVerdict, abandoned },
          endedAt: event.at,
          answeredAt: answeredAt ?? event.answeredAt,
          sipResponseCode: event.sipCode,
          agentId,
        });
        return { disposition: result.disposition };
      }
    }
  }
}
