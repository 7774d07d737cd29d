import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { Transform } from 'node:stream';
import { ApplicationFailure } from '@temporalio/common';
import type { Config } from '../../config';
import type { AppDeps } from '../../deps';
import { appendAuditSql } from '../../lib/audit';
import { emitEvent } from '../../lib/events';
import { numberGeo, placeOfPostalCode } from '../../lib/phone-geo';
import { withTenantSql } from '../../lib/tenancy';
import { createSwitchCommands, EslUnavailableError, speakableText } from '../../switch/esl';
import { speakToCall, type SpeechPart } from '../call-events/call-speech.service';
import { assertUuid } from '../../switch/esl/commands';
import type { CallRef } from '../../contracts/call-session';
import {
  findRecordingByCall,
  hasCallAudit,
  insertRecording,
  loadRecordingCallFacts,
  loadRecordingStartFacts,
  type RecordingStartFacts,
} from './recording-capture.repository';
import { recordingView } from './recording.views';
import { evaluateRecordingConsent, type RecordingConsentDecision } from './recording-consent';

export const RECORDING_CONTENT_TYPE = 'audio/wav';

/**
 * A spool file still absent after this many attempts of the capture step was never written (the
 * switch failed to record): the step gives up with a `recording.missing` audit entry instead of
 * holding the call session open forever. Earlier attempts wait for a switch still closing it.
 */
export const MISSING_SPOOL_ATTEMPTS = 5;

/** The folder the switch records into and the workers read from (the same path on both). */
export function switchRecordingsDir(config: Pick<Config, 'SWITCH_RECORDINGS_DIR' | 'DATA_DIR'>): string {
  return path.resolve(config.SWITCH_RECORDINGS_DIR ?? path.join(config.DATA_DIR, 'switch-recordings'));
}

/** `<SWITCH_RECORDINGS_DIR>/<tenant>/<call uuid>.wav`: both parts are validated ids, so the path cannot leave the folder. */
export function spoolPathOf(config: Pick<Config, 'SWITCH_RECORDINGS_DIR' | 'DATA_DIR'>, tenantId: string, callUuid: string): string {
  assertUuid(tenantId);
  assertUuid(callUuid);
  return path.join(switchRecordingsDir(config), tenantId, `${callUuid}.wav`);
}

/** `recordings/<tenant>/<yyyy>/<mm>/<call uuid>.wav`, by the answer's UTC month: a retried capture writes the same key. */
export function recordingStorageKey(tenantId: string, callUuid: string, startedAt: Date): string {
  const yyyy = String(startedAt.getUTCFullYear());
  const mm = String(startedAt.getUTCMonth() + 1).padStart(2, '0');
  return `recordings/${tenantId}/${yyyy}/${mm}/${callUuid}.wav`;
}

/**
 * How long each saying of the consent notice may take: the recording activity's own limit is
 * 45 s (twice this where the notice must also be on the recording), and a notice is a sentence or
 * two (about 80 ms a character).
 */
export const NOTICE_WAIT_MS = 15_000;

export type RecordingStart =
  | {
      status: 'recording';
      startedAt: string;
      twoPartyConsentState: string | null;
      consentNoticePlayed: boolean;
      /**
       * How many times the notice was said (0, 1, or 2 where it must also be on the recording):
       * the call session's relay reports each end of speech, and these are not the treatment's.
       */
      noticeSpeeches: number;
    }
  | { status: 'not_recorded' | 'skipped' | 'gone' };

/** Where each party of the call may be: the consumer by number, contact state and postal code; the caller by its DID and caller id. */
async function consentOf(facts: RecordingStartFacts): Promise<RecordingConsentDecision> {
  const [consumerGeo, callerGeo] = await Promise.all([
    numberGeo(facts.to_number),
    facts.from_number ? numberGeo(facts.from_number) : Promise.resolve({ zones: [], areaCodeState: null, nonGeographic: false }),
  ]);
  return evaluateRecordingConsent({
    consumer: [
      { source: 'area_code', state: consumerGeo.areaCodeState },
      { source: 'contact_state', state: facts.contact_state },
      { source: 'postal_code', state: placeOfPostalCode(facts.contact_postal_code).state },
    ],
    caller: [
      { source: 'did_state', state: facts.did_state },
      { source: 'caller_id_area_code', state: callerGeo.areaCodeState },
    ],
  });
}

const consentEvidence = (d: RecordingConsentDecision) => ({ applied: d.applied, rules_version: d.rules_version });

/**
 * Starts recording a call whose conversation just began, when its campaign records calls (an
 * inbound call: when its route does, or the campaign an ivr route names). The call session
 * calls it at the agent bridge for agent campaigns and at the answer, before anything is said,
 * for messages, menus and AI calls (docs/ai-calls.md). Where all-party consent applies, the
 * tenant's policy decides: `skip` records nothing (audited recording.skipped with the state),
 * `notice` speaks the tenant's notice_text to the consumer and records once it has been said:
 * consent comes before the recording (the timeline shows the notice, then recording_started).
 * Where a rule also wants the announcement on the recording (Washington, RCW 9.73.030(3)), the
 * notice is said once more as the recording runs, and this returns once that has been said too,
 * so nothing the call says next talks over it. A notice that cannot be said records nothing (the
 * step fails, the session goes on unrecorded); one that cannot be said on the recording stops it
 * and discards its file: an all-party call is never kept without its notice.
 */
export interface RecordingStartInput extends CallRef {
  /**
   * An automated call (message, menu, AI): its caller identity must be said before anything else
   * (47 CFR 64.1200(b)(1)), so a consent notice is preceded by the tenant's artificial-voice
   * disclosure. The treatment then says its own disclosure again, on the recording.
   */
  identityFirst?: boolean;
}

export async function startCallRecording(deps: AppDeps, ref: RecordingStartInput): Promise<RecordingStart> {
  const facts = await withTenantSql(deps.db, ref.tenantId, (sql) => loadRecordingStartFacts(sql, ref.callAttemptId));
  if (!facts?.record_calls) return { status: 'not_recorded' };
  const consent = await consentOf(facts);
  const state = consent.two_party_consent_state;

  if (state && facts.all_party_mode === 'skip') {
    await withTenantSql(deps.db, ref.tenantId, async (sql) => {
      if (await hasCallAudit(sql, ref.callAttemptId, 'recording.skipped')) return;
      await appendAuditSql(sql, ref.tenantId, [
        {
          actorType: 'workflow',
          action: 'recording.skipped',
          subjectType: 'call_attempt',
          subjectId: ref.callAttemptId,
          payload: { call_uuid: ref.callUuid, campaign_id: facts.campaign_id, two_party_consent_state: state, all_party_mode: 'skip', ...consentEvidence(consent) },
        },
      ]);
    });
    return { status: 'skipped' };
  }

  if (!deps.esl) throw new EslUnavailableError('this process has no switch link');
  const commands = createSwitchCommands(deps.esl);
  const notice: SpeechPart | null = state ? { purpose: 'consent_notice', text: facts.notice_text, data: { two_party_consent_state: state } } : null;
  const identity: SpeechPart[] = notice && ref.identityFirst && facts.identity_text ? [{ purpose: 'disclosure', text: facts.identity_text, data: { before: 'consent_notice' } }] : [];
  if (notice) {
    const said = await speakToCall(deps, ref, [...identity, notice], { waitMs: NOTICE_WAIT_MS });
    if (said.status === 'gone') return { status: 'gone' };
  }

  const file = spoolPathOf(deps.config, ref.tenantId, ref.callUuid);
  await mkdir(path.dirname(file), { recursive: true });
  const startedAt = new Date().toISOString();
  try {
    await commands.record(ref.callUuid, file);
  } catch (err) {
    if (!(await commands.exists(ref.callUuid).catch(() => true))) return { status: 'gone' };
    throw err;
  }

  const onRecording = notice !== null && consent.notice_must_be_recorded;
  if (notice && onRecording) {
    try {
      const said = await speakToCall(deps, ref, [{ ...notice, data: { ...notice.data, on_recording: true } }], { waitMs: NOTICE_WAIT_MS });
      if (said.status === 'gone') throw new Error('the consumer left before the notice was on the recording');
    } catch (err) {
      await commands.stopRecording(ref.callUuid, file).catch(() => undefined);
      await rm(file, { force: true });
      if (!(await commands.exists(ref.callUuid).catch(() => true))) return { status: 'gone' };
      throw err;
    }
  }

  await withTenantSql(deps.db, ref.tenantId, (sql) =>
    appendAuditSql(sql, ref.tenantId, [
      {
        actorType: 'workflow',
        action: 'recording.started',
        subjectType: 'call_attempt',
        subjectId: ref.callAttemptId,
        payload: {
          call_uuid: ref.callUuid,
          campaign_id: facts.campaign_id,
          two_party_consent_state: state,
          consent_notice_played: notice !== null,
          notice_text: notice ? speakableText(notice.text) : null,
          notice_on_recording: onRecording,
          identity_before_notice: identity.length > 0,
          all_party_mode: facts.all_party_mode,
          ...consentEvidence(consent),
        },
      },
    ]),
  );
  return { status: 'recording', startedAt, twoPartyConsentState: state, consentNoticePlayed: notice !== null, noticeSpeeches: notice ? (onRecording ? 2 : 1) : 0 };
}

export interface CaptureInput extends CallRef {
  startedAt: string;
  twoPartyConsentState: string | null;
  consentNoticePlayed: boolean;
}

export type CaptureResult = { status: 'stored' | 'exists'; recordingId: string } | { status: 'missing' };

/** Streams the spool file into the store under `key`, hashing and counting what it sends. */
async function moveToStore(deps: AppDeps, file: string, key: string): Promise<{ sha256: string; size: number }> {
  const hash = createHash('sha256');
  let size = 0;
  const tap = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      hash.update(chunk);
      size += chunk.length;
      done(null, chunk);
    },
  });
  const source = createReadStream(file);
  source.on('error', (err) => tap.destroy(err));
  try {
    await deps.objectStore.put(key, source.pipe(tap), { contentType: RECORDING_CONTENT_TYPE });
  } finally {
    source.destroy();
  }
  return { sha256: hash.digest('hex'), size };
}

function zoneOf(contactZone: string | null, zones: string[]): string | null {
  if (contactZone) return contactZone;
  return zones.length === 1 ? zones[0]! : null;
}

/**
 * After the call's final row: moves the switch's WAV from the spool folder into the object store
 * and writes the recording row, announced as `recording.available` in the same transaction, with
 * a `recording.created` audit entry holding the audio's SHA-256. The spool file is deleted only
 * once the row (and so the stored object it names) is committed. Idempotent: a repeat finds the
 * row and only cleans the spool. A store failure throws, and Temporal retries the step.
 */
export async function captureCallRecording(deps: AppDeps, input: CaptureInput, attempt: number): Promise<CaptureResult> {
  const file = spoolPathOf(deps.config, input.tenantId, input.callUuid);
  const existing = await withTenantSql(deps.db, input.tenantId, (sql) => findRecordingByCall(sql, input.callUuid));
  if (existing) {
    await rm(file, { force: true });
    return { status: 'exists', recordingId: existing.id };
  }
  const facts = await withTenantSql(deps.db, input.tenantId, (sql) => loadRecordingCallFacts(sql, input.callAttemptId));
  if (!facts) throw ApplicationFailure.nonRetryable(`call attempt ${input.callAttemptId} not found for the tenant`, 'RecordingCallNotFound');

  const present = await stat(file).then(
    () => true,
    (err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') return false;
      throw err;
    },
  );
  if (!present) {
    if (attempt < MISSING_SPOOL_ATTEMPTS) throw new Error('the recording is not in the spool folder yet');
    await withTenantSql(deps.db, input.tenantId, async (sql) => {
      if (await hasCallAudit(sql, input.callAttemptId, 'recording.missing')) return;
      await appendAuditSql(sql, input.tenantId, [
        { actorType: 'workflow', action: 'recording.missing', subjectType: 'call_attempt', subjectId: input.callAttemptId, payload: { call_uuid: input.callUuid } },
      ]);
    });
    return { status: 'missing' };
  }

  const startedAt = facts.answered_at ?? new Date(input.startedAt);
  const key = recordingStorageKey(input.tenantId, input.callUuid, startedAt);
  const { sha256, size } = await moveToStore(deps, file, key);
  const geo = await numberGeo(facts.to_number);
  const endedAt = facts.ended_at;

  const row = await withTenantSql(deps.db, input.tenantId, async (sql) => {
    const inserted = await insertRecording(sql, {
      callAttemptId: facts.call_attempt_id,
      callUuid: input.callUuid,
      campaignId: facts.campaign_id,
      debtId: facts.debt_id,
      agentId: facts.agent_id,
      phoneNumber: facts.to_number,
      accountRef: facts.account_ref,
      externalRef: facts.external_ref,
      startedAt,
      endedAt,
      durationSecs: endedAt ? Math.max(0, Math.floor((endedAt.getTime() - startedAt.getTime()) / 1000)) : null,
      localTz: zoneOf(facts.contact_timezone, geo.zones),
      twoPartyConsentState: input.twoPartyConsentState,
      consentNoticePlayed: input.consentNoticePlayed,
      attestA: facts.attest_a,
      aiUsed: facts.ai_used,
      storageKey: key,
      contentType: RECORDING_CONTENT_TYPE,
      sizeBytes: size,
      sha256,
    });
    if (!inserted) return findRecordingByCall(sql, input.callUuid);
    await appendAuditSql(sql, input.tenantId, [
      {
        actorType: 'workflow',
        action: 'recording.created',
        subjectType: 'recording',
        subjectId: inserted.id,
        payload: { call_attempt_id: facts.call_attempt_id, call_uuid: input.callUuid, storage_key: key, size_bytes: size, sha256, retained_until: inserted.retained_until },
      },
    ]);
    await emitEvent(sql, input.tenantId, { event: 'recording.available', eventId: inserted.id, occurredAt: inserted.created_at, data: recordingView(inserted) });
    return inserted;
  });
  await rm(file, { force: true });
  if (!row) throw new Error('the recording row vanished after its insert');
  return { status: 'stored', recordingId: row.id };
}
