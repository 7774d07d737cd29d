import type { z } from '../../lib/openapi';
import type { SmsRow } from './sms.repository';
import type { SmsMessageSchema, SmsMessageViewSchema } from './sms.schemas';

export const BODY_PREVIEW_LENGTH = 40;

type SmsMessage = z.infer<typeof SmsMessageSchema>;
type SmsMessageView = z.infer<typeof SmsMessageViewSchema>;

/** Code points, so a preview never ends in half a surrogate pair. */
export function bodyPreview(body: string | null): string | null {
  return body === null ? null : [...body].slice(0, BODY_PREVIEW_LENGTH).join('');
}

export function smsMessageView(row: SmsRow): SmsMessage {
  return {
    id: row.id,
    direction: row.direction as SmsMessage['direction'],
    status: row.status as SmsMessage['status'],
    from_e164: row.from_e164,
    to_e164: row.to_e164,
    body_preview: bodyPreview(row.body),
    segments: row.segments,
    client_ref: row.client_ref,
    provider_id: row.provider_id,
    provider_message_id: row.provider_message_id,
    campaign_id: row.campaign_id,
    debt_id: row.debt_id,
    occurred_at: row.occurred_at.toISOString(),
    corrects_id: row.corrects_id,
    recorded_at: row.recorded_at.toISOString(),
  };
}

const latest = <T>(rows: SmsRow[], pick: (r: SmsRow) => T | null): T | null => {
  for (let i = rows.length - 1; i >= 0; i--) {
    const v = pick(rows[i]!);
    if (v !== null) return v;
  }
  return null;
};

/**
 * The collapsed message: identity from the original, the state of the latest row, and what the
 * transitions learned on the way (provider id, billed segments, the charge, the last error).
 * `transitions` must be the original's transition rows, oldest first.
 */
export function smsMessageCollapsed(original: SmsRow, transitions: SmsRow[]): SmsMessageView {
  const all = [original, ...transitions];
  const timestamps: Record<string, string> = {};
  for (const row of all) timestamps[row.status] ??= row.occurred_at.toISOString();
  const charged = all.filter((r) => r.cost_usd !== null);
  return {
    ...smsMessageView(original),
    status: all[all.length - 1]!.status as SmsMessageView['status'],
    segments: latest(all, (r) => r.segments),
    provider_message_id: latest(all, (r) => r.provider_message_id),
    body: original.body,
    encoding: original.encoding as SmsMessageView['encoding'],
    consumer_ref: original.consumer_ref,
    cost_usd: charged.length ? Number(charged.reduce((s, r) => s + Number(r.cost_usd), 0).toFixed(6)) : null,
    error_code: latest(all, (r) => r.error_code),
    compliance_snapshot: original.compliance_snapshot,
    timestamps,
    transitions: transitions.map(smsMessageView),
  };
}
