/**
 * The simulated consumers of CONTRACT.md section 2's extension (docs/simulated-consumer.md): a
 * human-answered number ending 40-49 that has an audio fork attached speaks one of these scripts.
 * Lines were chosen for what PocketSphinx (the product's offline recognizer) decodes reliably from
 * eSpeak NG at 8 kHz, and for what the rule engine (src/modules/ai-engine) acts on.
 */

/** Verification factors a prompt can ask for, recognized by its words. */
export type VerificationFactor = 'zip' | 'account_last4' | 'ssn_last4' | 'pin' | 'dob';

/** The answers the consumers give: set these on the imported debt to make a right answer match. */
export const RIGHT_ANSWERS: Readonly<Record<VerificationFactor, { text: string; value: string }>> = {
  zip: { text: 'three zero three zero one', value: '30301' },
  account_last4: { text: 'one two three four', value: '1234' },
  ssn_last4: { text: 'one two three four', value: '1234' },
  pin: { text: 'one two three four', value: '1234' },
  dob: { text: 'march fifteenth nineteen eighty', value: '1980-03-15' },
};

export const WRONG_ANSWERS: Readonly<Record<VerificationFactor, string>> = {
  zip: 'one zero zero zero one',
  account_last4: 'two two two two',
  ssn_last4: 'two two two two',
  pin: 'two two two two',
  dob: 'march fifteenth nineteen eighty one',
};

/**
 * The factor a verification prompt asks for, from its words (script.ts verifyPrompt); a prompt
 * that names none (or a playback without text) gets the ZIP answer.
 */
export function factorAsked(heard: string): VerificationFactor {
  if (/social security/i.test(heard)) return 'ssn_last4';
  if (/date of birth/i.test(heard)) return 'dob';
  if (/\bzip\b/i.test(heard)) return 'zip';
  if (/\bpin\b/i.test(heard)) return 'pin';
  if (/\baccount\b/i.test(heard)) return 'account_last4';
  return 'zip';
}

export type ScriptStep =
  /** A fixed sentence. */
  | { say: string; when?: RegExp; barge?: Barge }
  /** The answer to the verification prompt just heard, right or wrong. */
  | { answer: 'right' | 'wrong'; when?: RegExp; barge?: Barge }
  /** Speech-shaped noise of this length: audio a recognizer can only decode with low confidence. */
  | { mumble: number; when?: RegExp; barge?: Barge };

/**
 * A step said while the AI is still speaking: `afterMs` into the first speak/playback whose text
 * matches `when` (any, without it), if that is still playing then.
 */
export interface Barge {
  afterMs: number;
  when?: RegExp;
}

export interface ConsumerScript {
  /** The last two digits of the number. */
  digits: number;
  name: string;
  /**
   * One step per AI turn, in order. A step with `when` is said only if the AI's turn just heard
   * matches it; otherwise it is dropped and the next step is considered for the same turn.
   */
  steps: ScriptStep[];
  /** How long the consumer waits, once its script is done and the line is quiet, before hanging up. */
  hangupAfterMs: number;
}

const YES_ITS_ME = 'yes that is right';
// Both handoff questions (script.ts handoffOffer, handoffConfirm); not the transfer line itself.
const ASKED_PERSON = /would you like to speak with a person/i;
const ASKED_AGAIN = /try again|please tell me/i;

export const CONSUMER_SCRIPTS: ReadonlyArray<ConsumerScript> = [
  {
    digits: 40,
    name: 'right party, verifies, promises to pay',
    steps: [{ say: YES_ITS_ME }, { answer: 'right' }, { say: 'okay I can do that' }],
    hangupAfterMs: 5000,
  },
  {
    digits: 41,
    name: 'asks for a person',
    steps: [{ say: YES_ITS_ME }, { say: 'let me talk to a real person' }, { say: 'yes please', when: ASKED_PERSON }],
    hangupAfterMs: 5000,
  },
  {
    digits: 42,
    name: 'fails verification every time',
    steps: [{ say: YES_ITS_ME }, { answer: 'wrong' }, { answer: 'wrong', when: ASKED_AGAIN }, { answer: 'wrong', when: ASKED_AGAIN }],
    hangupAfterMs: 5000,
  },
  { digits: 43, name: 'says nothing', steps: [], hangupAfterMs: 30_000 },
  {
    digits: 44,
    name: 'barges in, then verifies and promises to pay',
    steps: [{ say: YES_ITS_ME, barge: { afterMs: 1000, when: /speaking with/i } }, { answer: 'right' }, { say: 'okay I can do that' }],
    hangupAfterMs: 5000,
  },
  { digits: 45, name: 'stop calling me', steps: [{ say: 'stop calling me' }], hangupAfterMs: 5000 },
  {
    digits: 46,
    name: 'disputes the debt',
    steps: [{ say: YES_ITS_ME }, { answer: 'right' }, { say: 'I paid it off' }, { say: 'no thank you', when: ASKED_PERSON }],
    hangupAfterMs: 5000,
  },
  { digits: 47, name: 'wrong person', steps: [{ say: 'you have the wrong number' }], hangupAfterMs: 5000 },
  {
    digits: 48,
    name: 'mumbles (low confidence)',
    steps: [{ mumble: 1200 }, { mumble: 1200 }, { mumble: 1200 }],
    hangupAfterMs: 5000,
  },
  {
    digits: 49,
    name: 'asks for a callback',
    steps: [{ say: YES_ITS_ME }, { say: 'call me back later' }],
    hangupAfterMs: 5000,
  },
];

/** The script of a destination, by its last two digits (40-49), or undefined. */
export function scriptFor(destination: string): ConsumerScript | undefined {
  const digits = destination.replace(/\D/g, '');
  if (digits.length < 2) return undefined;
  const last2 = Number(digits.slice(-2));
  return CONSUMER_SCRIPTS.find((s) => s.digits === last2);
}
