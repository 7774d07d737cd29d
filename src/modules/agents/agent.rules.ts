import { conflict, unprocessable } from '../../lib/errors';

/**
 * Domain rules of agents (seats). Pure. The route checks JSON types and unknown keys (400
 * bad_request); everything here is a rule on a well-typed value.
 */

export const AGENT_ROLES = ['agent', 'supervisor', 'admin'] as const;
export const AGENT_STATUSES = ['active', 'inactive'] as const;
export const DEVICE_MODES = ['browser', 'external'] as const;
export const PRESENCES = ['offline', 'available', 'ringing', 'on_call', 'wrap_up', 'paused'] as const;
export type AgentRole = (typeof AGENT_ROLES)[number];
export type DeviceMode = (typeof DEVICE_MODES)[number];
export type Presence = (typeof PRESENCES)[number];

/**
 * The SIP extension alphabet: 1 to 64 characters of digits, letters, dot, underscore and hyphen.
 * It is exactly what the switch command builder accepts (src/switch/esl/commands.ts EXTENSION_RE)
 * and what the agents.sip_extension CHECK constraint allows, so a stored extension is always dialable.
 */
export const SIP_EXTENSION_MAX_CHARS = 64;
export const SIP_EXTENSION_RE = /^[A-Za-z0-9._-]{1,64}$/;
export const SIP_EXTENSION_RULE = `1 to ${SIP_EXTENSION_MAX_CHARS} characters of digits, letters, dot, underscore and hyphen`;

export const NAME_MAX_CHARS = 200;
// Deliberately plain (as for the tenant's admin agent): one @, no spaces, a dot in the domain.
const EMAIL_RE = /^[^\s@]{1,64}@[^\s@]+\.[^\s@]{2,}$/;

export function isSipExtension(value: string): boolean {
  return SIP_EXTENSION_RE.test(value);
}

/** 422 unprocessable unless the extension is in the switch's alphabet. */
export function checkSipExtension(value: string, field = 'sip_extension'): string {
  if (!isSipExtension(value)) throw unprocessable(`${field} must be ${SIP_EXTENSION_RULE}`);
  return value;
}

export interface NewAgentInput {
  name: string;
  email: string;
  role?: AgentRole;
  sip_extension?: string | null;
}

export interface NewAgent {
  name: string;
  email: string;
  role: AgentRole;
  sip_extension: string | null;
}

/** Normalizes a create body: name trimmed, email trimmed and lowercased; 422 on a broken value. */
export function normalizeNewAgent(input: NewAgentInput): NewAgent {
  const name = input.name.trim();
  if (!name) throw unprocessable('name must not be blank');
  if ([...name].length > NAME_MAX_CHARS) throw unprocessable(`name must be at most ${NAME_MAX_CHARS} characters`);
  const email = input.email.trim().toLowerCase();
  if (email.length > 254 || !EMAIL_RE.test(email)) throw unprocessable('email is not a valid email address');
  const sipExtension = input.sip_extension === undefined || input.sip_extension === null ? null : checkSipExtension(input.sip_extension);
  return { name, email, role: input.role ?? 'agent', sip_extension: sipExtension };
}

/** Presence moves a client can ask for. Ringing and on_call are driven by the dial loop only. */
export type PresenceAction = 'checkin' | 'checkout' | 'pause' | 'resume' | 'wrap_up';

export interface PresenceMove {
  to: Presence;
  /** False for an idempotent repeat (nothing is written or audited). */
  changed: boolean;
}

/**
 * The agent presence machine (SPEC "Agent presence"):
 * - checkin: offline → available; available → available is an idempotent repeat; any other presence is 409.
 * - checkout: any → offline (offline → offline is an idempotent repeat).
 * - pause: available → paused; resume: paused → available; wrap_up: wrap_up → available.
 *   Any other starting presence (a repeat included) is 409 conflict.
 */
export function presenceMove(from: Presence, action: PresenceAction): PresenceMove {
  switch (action) {
    case 'checkin':
      if (from === 'offline') return { to: 'available', changed: true };
      if (from === 'available') return { to: 'available', changed: false };
      throw conflict(`the agent is ${from}; check-in needs an offline (or available) seat`);
    case 'checkout':
      return { to: 'offline', changed: from !== 'offline' };
    case 'pause':
      return strict(from, 'available', 'paused', 'pause');
    case 'resume':
      return strict(from, 'paused', 'available', 'resume');
    case 'wrap_up':
      return strict(from, 'wrap_up', 'available', 'wrap-up');
  }
}

function strict(from: Presence, need: Presence, to: Presence, verb: string): PresenceMove {
  if (from !== need) throw conflict(`the agent is ${from}; ${verb} needs a ${need} seat`);
  return { to, changed: true };
}

/**
 * agents.wrap_up_until belongs to the current wrap-up: a move out of wrap_up, and any check-out,
 * clears it, so the durable wrap-up timer (which ends wrap-up only while the value is the one it
 * was started for) can never end a later one.
 */
export function clearsWrapUp(from: Presence, action: PresenceAction): boolean {
  return action === 'checkout' || from === 'wrap_up';
}

/** The stored presence (the agents.presence CHECK constraint keeps it in PRESENCES). */
export const asPresence = (value: string): Presence => value as Presence;
