// The decisions a call session makes from what the switch reports, as pure functions: the
// session workflow replays them, the dial tick and the /dial route share them, tests cover them.

import type { CallTreatment } from '../src/contracts/call-session';

/** What an answered call of a campaign type gets (CallTreatment). */
export function treatmentOf(campaignType: string): CallTreatment {
  switch (campaignType) {
    case 'predictive':
    case 'progressive':
    case 'preview':
    case 'manual':
      return 'agent';
    case 'tts_blast':
      return 'message';
    case 'tts_ivr':
    case 'ivr_cascade':
    case 'survey':
      return 'menu';
    case 'ai_voice':
      return 'ai';
    default:
      return 'none';
  }
}

/**
 * Whether answering-machine detection runs. `amd_enabled` null inherits the type's profile: on
 * for the automated agent modes (a machine must not take an agent) and for message blasts (a
 * machine gets no menu), off for human-initiated dials and interactive menus (a person is
 * expected to press keys; AMD's listening delay would cut the prompt).
 */
export function amdEffective(campaignType: string, amdEnabled: boolean | null): boolean {
  if (amdEnabled !== null) return amdEnabled;
  return campaignType === 'predictive' || campaignType === 'progressive' || campaignType === 'tts_blast';
}

export type MenuAction = 'transfer_agent' | 'optout' | 'hangup';

export type KeyOutcome =
  | { kind: 'optout' }
  | { kind: 'action'; action: MenuAction }
  | { kind: 'submenu'; path: string; prompt: string }
  | { kind: 'none' };

type Menu = Record<string, unknown>;

const isObject = (v: unknown): v is Menu => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The entries of a menu node: a flat map, or `{prompt, entries}`. */
function entriesOf(menu: Menu): Menu {
  return 'entries' in menu && isObject(menu.entries) ? menu.entries : menu;
}

/** The menu node reached by the keys of `path` from the root (null when the path leads nowhere). */
export function menuAt(root: Menu, path: string): Menu | null {
  let node: Menu = root;
  for (const key of path) {
    const entry = entriesOf(node)[key];
    if (!isObject(entry) || !isObject(entry.submenu)) return null;
    node = entry.submenu;
  }
  return node;
}

/** The prompt of the menu at `path`: its own, else (the root of a flat map) the campaign's tts_prompt. */
export function promptAt(root: Menu, path: string, ttsPrompt: string | null): string | null {
  const node = menuAt(root, path);
  if (node && typeof node.prompt === 'string') return node.prompt;
  return path === '' ? ttsPrompt : null;
}

/**
 * What a key pressed in the menu at `path` does. The campaign's opt-out digit wins over any
 * menu entry: a consumer who presses it is listed whatever the menu says.
 */
export function resolveKey(root: Menu, path: string, digit: string, optoutDigit: string | null): KeyOutcome {
  if (optoutDigit !== null && optoutDigit !== '' && digit === optoutDigit) return { kind: 'optout' };
  const node = menuAt(root, path);
  if (!node) return { kind: 'none' };
  const entry = entriesOf(node)[digit];
  if (!isObject(entry)) return { kind: 'none' };
  if (entry.action === 'optout') return { kind: 'optout' };
  if (entry.action === 'transfer_agent' || entry.action === 'hangup') return { kind: 'action', action: entry.action };
  if (isObject(entry.submenu)) {
    const prompt = typeof entry.submenu.prompt === 'string' ? entry.submenu.prompt : '';
    return { kind: 'submenu', path: path + digit, prompt };
  }
  return { kind: 'none' };
}

/** An answered consumer with no agent on the line after this long is abandoned (47 CFR 64.1200(a)(7): two seconds). */
export const ABANDON_AFTER_MS = 2000;

/**
 * Whether a consumer who hung up with no agent on the line was abandoned without the seller
 * message: the window had opened (`waitingSince`) and the hang-up came once it had closed. The
 * message cannot be spoken to a consumer already gone (the connect found the call gone, or had not
 * run: an AMD verdict still pending, a loaded worker), but the abandonment rate counts the call
 * all the same. A consumer who hung up within the two seconds was not kept waiting past them.
 */
export function abandonedWaiting(f: { waitingSince: number | null; agentId: string | null; hangupAt: string }): boolean {
  return f.waitingSince !== null && f.agentId === null && Date.parse(f.hangupAt) - f.waitingSince >= ABANDON_AFTER_MS;
}

export interface HangupFacts {
  hangupCause: string;
  answered: boolean;
  amdVerdict: string | null;
  abandoned: boolean;
}

/**
 * The engine disposition of a finished call: machine (answered by an answering machine),
 * abandoned (a person answered and no agent came in time), answered_human, or the unanswered outcomes busy, no_answer,
 * canceled, rejected and failed.
 */
export function dispositionOf(f: HangupFacts): string {
  if (f.answered) {
    // The abandonment rate counts calls a person answered (47 CFR 64.1200(a)(7)): a machine that
    // heard the identification message is a machine, not an abandoned consumer.
    if (f.amdVerdict === 'MACHINE') return 'machine';
    if (f.abandoned) return 'abandoned';
    return 'answered_human';
  }
  switch (f.hangupCause) {
    case 'USER_BUSY':
      return 'busy';
    case 'NO_ANSWER':
    case 'NO_USER_RESPONSE':
    case 'ALLOTTED_TIMEOUT':
      return 'no_answer';
    case 'ORIGINATOR_CANCEL':
      return 'canceled';
    case 'CALL_REJECTED':
      return 'rejected';
    default:
      return 'failed';
  }
}
