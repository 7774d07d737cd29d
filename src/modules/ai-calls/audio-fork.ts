import { createHmac, timingSafeEqual } from 'node:crypto';
import type { AppDeps } from '../../deps';
import { withTenantSql } from '../../lib/tenancy';
import { createSwitchCommands, EslCommandError, EslUnavailableError, type EslEvent } from '../../switch/esl';
import type { AiAudioForkResult, AiCallRef } from '../../contracts/ai-call';
import { engineLanguage } from '../ai-engine/engine.types';
import { selectAiCallFacts } from './ai-call.repository';

/** The websocket subprotocol mod_audio_fork asks for; the gateway takes no other. */
export const AUDIO_FORK_SUBPROTOCOL = 'audio.drachtio.org';
/** The consumer's leg, as the fork sends it: 16-bit signed little-endian mono PCM at 8 kHz. */
export const AUDIO_FORK_RATE = 8000;

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const CALL_UUID_RE = /^[A-Za-z0-9][A-Za-z0-9-]{0,63}$/;

/**
 * The call's credential in its fork URL: HMAC-SHA256 under AI_AUDIO_SECRET of the call uuid, bound
 * to its tenant and attempt so a URL cannot be re-pointed at another tenant's call.
 */
export function audioForkToken(secret: string, ref: AiCallRef): string {
  return createHmac('sha256', secret).update(`ai-audio:v1:${ref.tenantId}:${ref.callAttemptId}:${ref.callUuid}`).digest('base64url');
}

/** `<AI_AUDIO_WS_URL>/<tenant>/<attempt>/<call uuid>/<token>`: what the switch connects to for one call. */
export function audioForkUrl(base: string, secret: string, ref: AiCallRef): string {
  return `${base.replace(/\/+$/, '')}/${ref.tenantId}/${ref.callAttemptId}/${ref.callUuid}/${audioForkToken(secret, ref)}`;
}

/**
 * The call a fork URL's path names when its token is the one the secret gives (compared in
 * constant time), else null. Any path prefix is accepted (a balancer's route): the last four
 * segments are read.
 */
export function verifyAudioForkPath(pathname: string, secret: string): AiCallRef | null {
  const parts = pathname.split('/').filter((p) => p !== '');
  if (parts.length < 4) return null;
  const [tenantId, callAttemptId, callUuid, token] = parts.slice(-4) as [string, string, string, string];
  if (!UUID_RE.test(tenantId) || !UUID_RE.test(callAttemptId) || !CALL_UUID_RE.test(callUuid)) return null;
  const ref = { tenantId, callAttemptId, callUuid };
  const expected = Buffer.from(audioForkToken(secret, ref));
  const given = Buffer.from(token);
  return given.length === expected.length && timingSafeEqual(given, expected) ? ref : null;
}

/**
 * Connects the consumer's leg to the audio gateway before the AI says anything: checks the module
 * is loaded, sends `uuid_audio_fork <uuid> start <url> mono 8k <metadata>` and waits for the
 * module's `mod_audio_fork::connect` (or `connect_failed`) for AI_AUDIO_CONNECT_TIMEOUT_MS.
 * Without AI_AUDIO_WS_URL nothing is started (`switch`: the switch's own recognizer reports
 * dd::speech). A call the gateway cannot hear is `failed`: the workflow hands it to a person or
 * ends it politely. A lost switch link throws (the activity is retried).
 */
export async function startAudioFork(deps: AppDeps, ref: AiCallRef): Promise<AiAudioForkResult> {
  const { AI_AUDIO_WS_URL: base, AI_AUDIO_SECRET: secret } = deps.config;
  if (!base || !secret) return { status: 'switch' };
  if (!deps.esl) throw new EslUnavailableError('this process has no switch link');
  const esl = deps.esl;
  const language = await withTenantSql(deps.db, ref.tenantId, async (sql) => engineLanguage((await selectAiCallFacts(sql, ref.callAttemptId))?.voice?.language));
  const failed = (reason: string): AiAudioForkResult => {
    deps.logger.warn({ tenantId: ref.tenantId, callAttemptId: ref.callAttemptId, call_uuid: ref.callUuid, reason }, 'AI call cannot hear the consumer');
    return { status: 'failed', reason };
  };
  // PocketSphinx ships an English model only (docs/speech.md): a Spanish call needs a hosted provider.
  if (language === 'es' && deps.config.SPEECH_PROVIDER === 'offline') return failed('language_unsupported');
  const cmds = createSwitchCommands(esl);
  if (!(await cmds.moduleLoaded('mod_audio_fork'))) return failed('module_missing');
  let settle: (outcome: 'connect' | 'connect_failed') => void = () => undefined;
  const reported = new Promise<'connect' | 'connect_failed'>((resolve) => (settle = resolve));
  const onEvent = (ev: EslEvent) => {
    if (ev.uuid !== ref.callUuid || ev.name !== 'CUSTOM') return;
    if (ev.subclass === 'mod_audio_fork::connect') settle('connect');
    else if (ev.subclass === 'mod_audio_fork::connect_failed') settle('connect_failed');
  };
  esl.on('event', onEvent);
  let timer: NodeJS.Timeout | undefined;
  try {
    const metadata = JSON.stringify({ call_uuid: ref.callUuid, language, sample_rate: AUDIO_FORK_RATE });
    try {
      await cmds.startAudioFork(ref.callUuid, { url: audioForkUrl(base, secret, ref), sampleRate: '8k', metadata });
    } catch (err) {
      if (err instanceof EslCommandError) return failed('refused');
      throw err;
    }
    const timeout = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), deps.config.AI_AUDIO_CONNECT_TIMEOUT_MS)));
    const outcome = await Promise.race([reported, timeout]);
    if (outcome === 'connect') return { status: 'fork' };
    // A fork that connects after we gave up would feed a call nobody listens to.
    await cmds.stopAudioFork(ref.callUuid).catch(() => undefined);
    return failed(outcome === 'timeout' ? 'connect_timeout' : 'connect_failed');
  } finally {
    clearTimeout(timer);
    esl.off('event', onEvent);
  }
}

/**
 * Stops the call's fork when a person takes the call: what the consumer says to a person is not
 * the AI's to hear. A leg without a fork (or a switch that refuses) is not an error.
 */
export async function stopAudioFork(deps: AppDeps, callUuid: string): Promise<void> {
  if (!deps.config.AI_AUDIO_WS_URL || !deps.esl) return;
  await createSwitchCommands(deps.esl)
    .stopAudioFork(callUuid)
    .catch(() => undefined);
}
