import type { CryptoBox } from '../../lib/crypto-box';

/**
 * A consumer's words (a date of birth, the last digits of an account) travel from the switch
 * relay through two workflows to the engine's activity. Temporal keeps every signal and activity
 * input in the workflow's history, readable in the Web UI, so they cross it sealed under the
 * deployment key and are opened only where the engine reads them.
 */
export function sealSpeech(box: CryptoBox, text: string): string {
  return box.encrypt(text);
}

/** CryptoBox's form: v1, a 12-byte IV and a 16-byte tag in base64url, then the ciphertext. */
const SEALED = /^v1\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]*$/;

/**
 * The words of a sealed utterance. Speech signalled before sealing existed is plain text and is
 * taken as it is; a sealed value that does not open (another deployment's key) is an error, never
 * words for the engine.
 */
export function openSpeech(box: CryptoBox, value: string): string {
  return SEALED.test(value) ? box.decrypt(value) : value;
}
