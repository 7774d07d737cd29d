import type { Client as TemporalClient } from '@temporalio/client';
import type { Logger } from '../../lib/logger';
import type { EslEvent, EslManager } from '../../switch/esl';
import { callEventSignal, callSessionWorkflow } from '../../../workflows/call-session.workflow';
import { callSessionWorkflowId, type CallSignal } from '../../contracts/call-session';
import type { CryptoBox } from '../../lib/crypto-box';
import { MAX_SPEECH_CHARS } from '../ai-calls/ai-call.rules';
import { sealSpeech } from '../ai-calls/ai-speech.seal';
import type { Database } from '../../lib/db';
import { recordCallEvent } from '../call-events/call-event.service';
import type { CallEventFact } from '../call-events/call-event.repository';
import { inboundEventSignal, inboundCallWorkflow } from '../../../workflows/inbound-call.workflow';
import { inboundCallWorkflowId, type InboundSignal } from '../../contracts/inbound-call';
import { resolveInboundRoute } from '../inbound-calls/inbound-call.repository';
import { INBOUND_ATTEMPT_VAR, INBOUND_TENANT_VAR } from '../inbound-calls/inbound-call.service';
import { createSwitchCommands } from '../../switch/esl';
import { maskPhone } from '../../lib/phone';

/** Event-Date-Timestamp is microseconds since the epoch. */
function eventTime(ev: EslEvent): string {
  const us = Number(ev.headers['Event-Date-Timestamp']);
  return new Date(Number.isFinite(us) && us > 0 ? Math.floor(us / 1000) : Date.now()).toISOString();
}

function epochTime(value: string | undefined): string | null {
  const s = Number(value);
  return Number.isFinite(s) && s > 0 ? new Date(s * 1000).toISOString() : null;
}

/**
 * The call-session signal an ESL event of a campaign consumer leg stands for, or null. `seal`
 * turns a consumer's words into what may enter a workflow history (ai-speech.seal.ts).
 */
export function toCallSignal(ev: EslEvent, seal: (text: string) => string): CallSignal | null {
  const seq = ev.headers['Event-Sequence'] || `${ev.name}:${ev.headers['Event-Date-Timestamp'] ?? ''}`;
  switch (ev.name) {
    case 'CHANNEL_ANSWER':
      return { kind: 'answered', seq, at: eventTime(ev) };
    case 'CUSTOM': {
      // dd::speech is the contract of the switch's speech recognizer: one event per consumer
      // utterance, its words in Speech-Text (docs/ai-calls.md). The engine reads them unmasked (a
      // date of birth is eight digits), so they travel sealed; the transcript masks them when it is written.
      if (ev.subclass === 'dd::speech') {
        return { kind: 'speech', seq, text: seal((ev.headers['Speech-Text'] ?? '').slice(0, MAX_SPEECH_CHARS)), at: eventTime(ev) };
      }
      if (ev.subclass !== 'amd') return null;
      return { kind: 'amd', seq, verdict: (ev.headers['AMD-Result'] ?? ev.variables.amd_result ?? '').toUpperCase() };
    }
    case 'DTMF': {
      const digit = ev.headers['DTMF-Digit'] ?? '';
      return /^[0-9*#]$/.test(digit) ? { kind: 'dtmf', seq, digit, at: eventTime(ev) } : null;
    }
    case 'CHANNEL_EXECUTE_COMPLETE':
      // What the product says is spoken (speak); a played file ends the same way.
      return ev.headers.Application === 'speak' || ev.headers.Application === 'playback' ? { kind: 'playback_done', seq } : null;
    case 'CHANNEL_HANGUP_COMPLETE': {
      const sip = Number(ev.variables.sip_term_status);
      return {
        kind: 'hangup',
        seq,
        at: eventTime(ev),
        cause: ev.headers['Hangup-Cause'] || ev.variables.hangup_cause || 'NORMAL_CLEARING',
        sipCode: Number.isInteger(sip) && sip > 0 ? sip : null,
        answeredAt: epochTime(ev.variables.answer_epoch),
      };
    }
    default:
      return null;
  }
}

/**
 * The timeline event (CONTRACT section 11) an ESL event of a campaign consumer leg reports, or null.
 * Events that happen once per call are keyed by name, the others by the switch's event identity,
 * so two relays reporting the same event write it once.
 */
export function toTimelineEvent(ev: EslEvent): CallEventFact | null {
  const at = eventTime(ev);
  const identity = `${ev.headers['Core-UUID'] ?? ''}:${ev.headers['Event-Sequence'] ?? ''}`;
  switch (ev.name) {
    case 'CHANNEL_PROGRESS':
    case 'CHANNEL_PROGRESS_MEDIA':
      return { event: 'ringing', at, dedupKey: 'ringing' };
    case 'CHANNEL_ANSWER':
      return { event: 'answered', at, dedupKey: 'answered' };
    case 'CUSTOM': {
      if (ev.subclass !== 'amd') return null;
      const verdict = (ev.headers['AMD-Result'] ?? ev.variables.amd_result ?? '').toUpperCase();
      return { event: 'amd', at, data: { verdict, cause: ev.headers['AMD-Cause'] ?? ev.variables.amd_cause ?? null }, dedupKey: 'amd' };
    }
    case 'DTMF': {
      const digit = ev.headers['DTMF-Digit'] ?? '';
      return /^[0-9*#]$/.test(digit) ? { event: 'digit', at, data: { digit }, dedupKey: `digit:${identity}` } : null;
    }
    case 'RECORD_START':
      return { event: 'recording_started', at, dedupKey: `recording_started:${identity}` };
    case 'RECORD_STOP':
      return { event: 'recording_stopped', at, dedupKey: `recording_stopped:${identity}` };
    case 'CHANNEL_HANGUP_COMPLETE': {
      const sip = Number(ev.variables.sip_term_status);
      return {
        event: 'hangup',
        at,
        data: { cause: ev.headers['Hangup-Cause'] || ev.variables.hangup_cause || 'NORMAL_CLEARING', sip_code: Number.isInteger(sip) && sip > 0 ? sip : null },
        dedupKey: 'hangup',
      };
    }
    default:
      return null;
  }
}

/** The inbound-session signal an ESL event of an inbound leg stands for (keys and the hangup), or null. */
export function toInboundSignal(ev: EslEvent): InboundSignal | null {
  const signal = toCallSignal(ev, () => '');
  return signal && (signal.kind === 'dtmf' || signal.kind === 'hangup') ? signal : null;
}

/** The called DID of an inbound leg in E.164: the dialplan's dd_did, else the destination number. */
function calledNumber(ev: EslEvent): string {
  const raw = ev.variables.dd_did || ev.headers['Caller-Destination-Number'] || '';
  const digits = raw.replace(/^\+/, '');
  return /^\d{8,15}$/.test(digits) ? `+${digits}` : '';
}

export interface CallEventRelayOptions {
  esl: EslManager;
  temporal: TemporalClient;
  taskQueue: string;
  logger: Logger;
  /** Seals consumer speech before it enters a workflow history. */
  box: CryptoBox;
  /** Idle limit of a call session (the reaper's business after that). */
  idleMs?: number;
  /** Where the calls' timelines are written (call_events); without it nothing is. */
  db?: Database;
}

/**
 * Relays the switch's events about campaign calls (legs originated with `dd_call_attempt_id`) to
 * each call's session workflow with signalWithStart: the first event starts the session. Events of
 * one call are sent in order; the session drops repeats. Events that arrive while no relay runs
 * (a worker restart) are lost to the session; the run's reaper closes such calls after
 * call_ttl_ms. Returns a function that stops the relay and waits for queued signals.
 */
export function startCallEventRelay(options: CallEventRelayOptions): () => Promise<void> {
  const chains = new Map<string, Promise<void>>();
  const idleMs = options.idleMs ?? 4 * 3600 * 1000;
  const enqueue = (uuid: string, send: () => Promise<void>) => {
    const next = (chains.get(uuid) ?? Promise.resolve()).then(send);
    chains.set(uuid, next);
    void next.finally(() => {
      if (chains.get(uuid) === next) chains.delete(uuid);
    });
  };
  // Inbound legs this relay routed, by call uuid: the tenant of their session until the leg has
  // the channel variable the session sets (a relay that starts later reads that).
  const inboundTenants = new Map<string, string>();
  const onInbound = (ev: EslEvent, uuid: string) => {
    const db = options.db;
    const tenantOf = () => inboundTenants.get(uuid) ?? ev.variables[INBOUND_TENANT_VAR] ?? null;
    if (ev.name === 'CHANNEL_PARK') {
      if (!db || ev.variables[INBOUND_TENANT_VAR]) return;
      enqueue(uuid, async () => {
        const did = calledNumber(ev);
        try {
          const route = did ? await resolveInboundRoute(db, did) : null;
          if (!route) {
            // No active route on an active DID of a tenant: the number is unallocated here.
            options.logger.info({ did: maskPhone(did), call_uuid: uuid }, 'inbound call to an unrouted number hung up');
            await createSwitchCommands(options.esl).hangup(uuid, 'UNALLOCATED_NUMBER');
            return;
          }
          inboundTenants.set(uuid, route.tenant_id);
          await options.temporal.workflow.start(inboundCallWorkflow, {
            workflowId: inboundCallWorkflowId(route.tenant_id, uuid),
            taskQueue: options.taskQueue,
            workflowIdReusePolicy: 'REJECT_DUPLICATE',
            args: [
              {
                tenantId: route.tenant_id,
                routeId: route.route_id,
                destType: route.dest_type,
                destRef: route.dest_ref,
                recording: route.recording,
                queueStreamEnabled: route.queue_stream_enabled,
                callUuid: uuid,
                caller: ev.headers['Caller-Caller-ID-Number'] ?? '',
                did,
                arrivedAt: eventTime(ev),
                idleMs,
              },
            ],
          });
        } catch (err) {
          // Another relay started the session first, or the start failed: either way nothing more here.
          if ((err as Error).name !== 'WorkflowExecutionAlreadyStartedError') {
            options.logger.warn({ err: (err as Error).message, call_uuid: uuid }, 'inbound call not routed');
          }
        }
      });
      return;
    }
    const attemptId = ev.variables[INBOUND_ATTEMPT_VAR];
    const fact = db && attemptId ? toTimelineEvent(ev) : null;
    const signal = toInboundSignal(ev);
    if (!fact && !signal) return;
    enqueue(uuid, async () => {
      const tenantId = tenantOf();
      if (!tenantId) return;
      if (fact && db && attemptId) {
        await recordCallEvent({ db }, tenantId, attemptId, fact).catch((err: unknown) =>
          options.logger.warn({ err: (err as Error).message, call_attempt_id: attemptId, event: ev.name }, 'call timeline event not written'),
        );
      }
      if (!signal) return;
      if (signal.kind === 'hangup') inboundTenants.delete(uuid);
      await options.temporal.workflow
        .getHandle(inboundCallWorkflowId(tenantId, uuid))
        .signal(inboundEventSignal, signal)
        .catch((err: unknown) => options.logger.warn({ err: (err as Error).message, call_uuid: uuid, event: ev.name }, 'inbound call event not relayed'));
    });
  };
  const onEvent = (ev: EslEvent) => {
    if (ev.uuid && ev.variables.dd_direction === 'inbound') {
      onInbound(ev, ev.uuid);
      return;
    }
    const attemptId = ev.variables.dd_call_attempt_id;
    const tenantId = ev.variables.dd_tenant_id;
    if (!ev.uuid || !attemptId || !tenantId) return;
    const db = options.db;
    const fact = db ? toTimelineEvent(ev) : null;
    const signal = toCallSignal(ev, (text) => sealSpeech(options.box, text));
    if (!signal && !fact) return;
    const uuid = ev.uuid;
    const send = async () => {
      // Written as observed, in the order the switch reported (events of one millisecond keep it);
      // a lost write loses one line of the timeline, never the call.
      if (fact && db) {
        await recordCallEvent({ db }, tenantId, attemptId, fact).catch((err: unknown) =>
          options.logger.warn({ err: (err as Error).message, call_attempt_id: attemptId, event: ev.name }, 'call timeline event not written'),
        );
      }
      if (!signal) return;
      try {
        await options.temporal.workflow.signalWithStart(callSessionWorkflow, {
          workflowId: callSessionWorkflowId(tenantId, uuid),
          taskQueue: options.taskQueue,
          args: [
            {
              tenantId,
              callAttemptId: attemptId,
              callUuid: uuid,
              agentDomain: ev.variables.dd_agent_domain || null,
              agentId: ev.variables.dd_agent_id || null,
              idleMs,
            },
          ],
          // A late or repeated event of a finished call must not open a second session.
          workflowIdReusePolicy: 'REJECT_DUPLICATE',
          signal: callEventSignal,
          signalArgs: [signal],
        });
      } catch (err) {
        options.logger.warn({ err: (err as Error).message, call_attempt_id: attemptId, event: ev.name }, 'call event not relayed');
      }
    };
    enqueue(uuid, send);
  };
  options.esl.on('event', onEvent);
  return async () => {
    options.esl.off('event', onEvent);
    await Promise.allSettled([...chains.values()]);
  };
}
