import type { AppDeps } from '../../deps';
import { withTenantSql } from '../../lib/tenancy';
import { createSwitchCommands, EslCommandError, EslUnavailableError, speakableText } from '../../switch/esl';
import { appendCallEvent, type SpokenPurpose } from './call-event.repository';

export interface SpeechTarget {
  tenantId: string;
  callAttemptId: string;
  callUuid: string;
}

/** One part of what is said, with why it is said (the timeline records each part). */
export interface SpeechPart {
  purpose: SpokenPurpose;
  text: string;
  data?: Record<string, unknown>;
}

export type SpeechResult = { status: 'spoken'; text: string } | { status: 'silent' | 'gone' };

/**
 * Says the parts, in order and as one utterance, to the consumer leg with the configured TTS
 * engine and voice (TTS_ENGINE, TTS_VOICE), and writes each part to the call's timeline as
 * `spoken` with its purpose and its text, dated when the switch was asked. One utterance, so the
 * switch reports one end of speech (a message's end hangs up, an AI turn's end lets the next one
 * start). With `waitMs` it returns once the speech ended. A leg gone meanwhile heard nothing
 * (`gone`, nothing written); empty parts say nothing (`silent`). A refused speech (the engine not
 * loaded, a hang-up while speaking) throws EslCommandError: what was not heard is not written.
 */
export async function speakToCall(deps: AppDeps, target: SpeechTarget, parts: SpeechPart[], opts: { waitMs?: number } = {}): Promise<SpeechResult> {
  if (!deps.esl) throw new EslUnavailableError('this process has no switch link');
  const commands = createSwitchCommands(deps.esl);
  const said = parts.map((p) => ({ ...p, text: speakableText(p.text) })).filter((p) => p.text !== '');
  const text = speakableText(said.map((p) => p.text).join(' '));
  if (text === '') return { status: 'silent' };
  const engine = deps.config.TTS_ENGINE;
  const voice = deps.config.TTS_VOICE;
  const at = new Date();
  try {
    await commands.speak(target.callUuid, { engine, voice, text }, { waitMs: opts.waitMs });
  } catch (err) {
    if (err instanceof EslCommandError && !(await commands.exists(target.callUuid).catch(() => true))) return { status: 'gone' };
    throw err;
  }
  await withTenantSql(deps.db, target.tenantId, async (sql) => {
    for (const p of said) {
      await appendCallEvent(sql, target.callAttemptId, { event: 'spoken', at, data: { ...p.data, purpose: p.purpose, text: p.text, engine, voice } });
    }
  });
  return { status: 'spoken', text };
}
