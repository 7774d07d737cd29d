import { FEDERAL, STATE_RULES } from '../compliance/compliance.rules';
import { GATE_CHAIN, type Gate } from '../compliance/compliance.types';

export interface GateBasis {
  /** What a refusal under the gate prevented. */
  description: string;
  /** The regulatory texts the engine applies under the gate (compliance.rules.ts, RULES_VERSION). */
  citations: string[];
}

const unique = (values: readonly string[]): string[] => [...new Set(values)];

/** Per gate, the basis of a refusal: what it prevented and the rules the engine cites for it. */
export const GATE_BASIS: Record<Gate, GateBasis> = {
  tcpa_no_consent: {
    description: 'A call or text without prior express consent on record for the number, the debt and the channel (TCPA).',
    citations: [...FEDERAL.consent.citations],
  },
  consent_revoked: {
    description: 'A call or text after the consumer revoked consent for the number and channel (TCPA).',
    citations: [...FEDERAL.consent.citations],
  },
  dnc_listed: {
    description: 'A call or text to a number on the tenant’s internal do-not-call list.',
    citations: [...FEDERAL.dnc.citations],
  },
  cease_and_desist: {
    description: 'A communication about a debt whose consumer asked in writing that communication stop (FDCPA).',
    citations: [...FEDERAL.ceaseAndDesist.citations],
  },
  quiet_hours: {
    description: 'A call or text outside 08:00-21:00 in a time zone the consumer may be in, or outside the campaign window.',
    citations: [...FEDERAL.callingHours.citations],
  },
  regf_7in7: {
    description: 'An eighth call in seven days about the debt (Regulation F frequency presumption).',
    citations: [...FEDERAL.regf7in7.citations],
  },
  regf_post_contact: {
    description: 'A call within seven days after a telephone conversation about the debt (Regulation F).',
    citations: [...FEDERAL.regfPostContact.citations],
  },
  state_limit: {
    description: 'A communication over a state or city cap on contacts per debt or per debtor.',
    citations: unique(STATE_RULES.map((r) => r.citation)),
  },
  number_reassigned: {
    description: 'A call or text to a number permanently disconnected on or after the consent was given (reassigned number).',
    citations: [...FEDERAL.reassigned.citations],
  },
  tenant_policy: {
    description:
      'A communication the tenant’s own compliance policy refuses (states, line types, hours, daily cap, opted-in rules), an artificial-voice call without a valid disclosure, or a decision the engine could not make (fail closed).',
    citations: [...FEDERAL.artificialVoice.citations],
  },
};

export const GATES: readonly Gate[] = GATE_CHAIN;

/** `{<gate>: 0}` for every gate, in chain order. */
export function zeroByGate(): Record<Gate, number> {
  return Object.fromEntries(GATE_CHAIN.map((g) => [g, 0])) as Record<Gate, number>;
}
