import { isSealed, type CryptoBox } from '../../lib/crypto-box';

/**
 * A consumer's words (a date of birth, the last digits of an account) travel from the switch
 * relay through two workflows to the engine's activity. Temporal keeps every signal and activity
 * input in the workflow's history, readable in the Web UI, so they cross it sealed under the
 * deployment key and are opened only where the engine reads them.
 */
export function sealSpeech(box: CryptoBox, text: string): string {
  return box.encrypt(text);
}

/**
 * The words of a sealed utterance. Speech signalled before sealing existed is plain text and is
 * taken as it is; a sealed value that does not open (another deployment's key) is an error, never
 * words for the engine.
 */
export function openSpeech(box: CryptoBox, value: string): string {
  return isSealed(value) ? box.decrypt(value) : value;
}

type VerifyingState = { verification?: { expected?: string | null } | null };

/**
 * The engine state as it is stored: the expected answer of the verification factor (a date of
 * birth, an SSN's last four, a PIN) sealed like the import field it came from, so the
 * ai_conversations row never holds it in clear. Any other shape is stored as it is.
 */
export function sealEngineState<S>(box: CryptoBox, state: S): S {
  const v = (state as VerifyingState | null)?.verification;
  if (!v || typeof v.expected !== 'string' || isSealed(v.expected)) return state;
  return { ...state, verification: { ...v, expected: box.encrypt(v.expected) } };
}

/** The stored engine state with its expected answer opened, for the engine's next turn. */
export function openEngineState<S>(box: CryptoBox, state: S): S {
  const v = (state as VerifyingState | null)?.verification;
  if (!v || typeof v.expected !== 'string' || !isSealed(v.expected)) return state;
  return { ...state, verification: { ...v, expected: box.decrypt(v.expected) } };
}
