import { MERGE_VARIABLES } from '../campaigns/campaign.rules';

export type MergeVariable = (typeof MERGE_VARIABLES)[number];

/** The values a sms_blast body's `{{name}}` tokens take for one debt; null or absent renders empty. */
export type MergeValues = Partial<Record<MergeVariable, string | null>>;

const MERGE_TOKEN_RE = /\{\{([^{}]*)\}\}/g;

/**
 * Renders a campaign's sms_body for one debt. The body was validated at campaign write
 * (smsBodyProblem), so an unknown token cannot be there; if one is anyway it is kept verbatim
 * rather than guessed at, so the consumer never receives a silently altered text.
 */
export function mergeSmsBody(template: string, values: MergeValues): string {
  return template.replace(MERGE_TOKEN_RE, (token, name: string) => {
    if (!(MERGE_VARIABLES as readonly string[]).includes(name)) return token;
    return values[name as MergeVariable] ?? '';
  });
}

/** `{{amount}}`: cents as a plain decimal with two places ("1234.50"), no currency symbol (the template carries it). */
export function formatAmount(cents: bigint | number): string {
  const n = BigInt(cents);
  const sign = n < 0n ? '-' : '';
  const abs = n < 0n ? -n : n;
  return `${sign}${abs / 100n}.${String(abs % 100n).padStart(2, '0')}`;
}
