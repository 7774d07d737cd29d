import type { Mail } from '../../lib/mailer';
import type { AlertRow } from './billing.repository';
import { toMicros, usd } from './billing.rules';

/** mail_outbox.kind of a spend-alert mail (also the mail_outbox_deliveries_total `kind` label). */
export const ALERT_MAIL_KIND = 'billing_threshold';

/** The mail an account admin gets for one crossing: the recorded facts, nothing else of the account. */
export function alertMail(to: string, alert: AlertRow): Mail {
  const spent = usd(toMicros(alert.spent_usd));
  const limit = usd(toMicros(alert.limit_usd));
  return {
    to,
    kind: ALERT_MAIL_KIND,
    subject: `Spend alert: ${alert.threshold_pct} % of the ${alert.period_key} spend cap reached`,
    text: [
      `Your account's metered spend for ${alert.period_key} (a UTC calendar month) reached ${alert.threshold_pct} % of its spend cap.`,
      '',
      `Threshold: ${alert.threshold_pct} %`,
      `Spend when crossed: ${spent} USD`,
      `Spend cap: ${limit} USD`,
      `Period: ${alert.period_key}`,
      `Crossed at: ${alert.crossed_at.toISOString()}`,
      `Billing scheme: ${alert.scheme}; enforcement mode: ${alert.enforcement_mode ?? 'not set (hard_block)'}`,
      '',
      "Each threshold is announced once per period to the account's administrators. GET /v1/billing/account shows the spend now;",
      "GET /v1/billing/alerts lists this period's crossings.",
    ].join('\n'),
  };
}
