import type { AppDeps } from '../../deps';
import { AppError, badRequest, notFound, unprocessable } from '../../lib/errors';
import { emitLiveEvent } from '../../lib/events';
import { handOffQueuedMail } from '../../lib/mail-delivery';
import { withTenantSql, type SqlTx } from '../../lib/tenancy';
import { transitionCampaign } from '../campaigns/campaign-lifecycle.service';
import { csvLine } from '../compliance-reports/artifact';
import { ALERT_MAIL_KIND, alertMail } from './billing-alert-mail';
import {
  accountAdminEmails,
  campaignIdsIn,
  enabledAccountBlock,
  ledgerSums,
  listAlerts,
  meteredUsage,
  movePlanStatus,
  readAccount,
  recordCrossings,
  setBlocked,
  tenantFacts,
  unsentMailIds,
  type AccountRow,
  type AlertRow,
  type MeteredUsage,
} from './billing.repository';
import {
  availableOf,
  blockReason,
  drawDown,
  lineItems,
  monthWindow,
  periodKeyOf,
  PRICES,
  reachedThresholds,
  subtotalOf,
  toMicros,
  usd,
  usedPct,
  type BlockReason,
  type LineItem,
} from './billing.rules';

/** Metered spend: SMS and voice-AI as charged, answered minutes (outbound and inbound) and exported WAV files at their rates. */
const spendOf = (u: MeteredUsage): bigint =>
  toMicros(u.sms_cost) +
  toMicros(u.ai_cost) +
  BigInt(u.answered_minutes) * toMicros(PRICES.houseMinuteUsd) +
  BigInt(u.inbound_minutes) * toMicros(PRICES.inboundMinuteUsd) +
  BigInt(u.wav_files) * toMicros(PRICES.wavFileUsd);

const monthOf = (now: Date) => monthWindow(periodKeyOf(now))!;

interface Position {
  periodKey: string;
  spent: bigint;
  cap: bigint | null;
  cash: bigint;
  grant: bigint;
  deposit: bigint;
  creditLimit: bigint;
  available: bigint;
  reason: BlockReason | null;
}

/**
 * Where an enabled account stands now: the period spend is the calendar month's metered usage
 * (fixed monthly charges are invoiced, they do not count against the cap); a prepaid balance is
 * drawn down by all metered usage since the account was created. Both windows end with the month,
 * not at `now`: metering stamps rows with the database clock rounded to the millisecond, which can
 * read a millisecond ahead of this process's clock, and a row just committed must never fall outside.
 */
async function positionOf(sql: SqlTx, account: AccountRow & { scheme: NonNullable<AccountRow['scheme']> }, now: Date): Promise<Position> {
  const month = monthOf(now);
  const sums = await ledgerSums(sql);
  const spent = spendOf(await meteredUsage(sql, month.from, month.to));
  const lifetime = account.scheme === 'prepaid' ? spendOf(await meteredUsage(sql, account.created_at, month.to)) : 0n;
  const { cash, grant } = drawDown(account.scheme, { cash: toMicros(sums.cash), grant: toMicros(sums.grant) }, lifetime);
  const creditLimit = toMicros(account.credit_limit_usd);
  const available = availableOf({ cash, grant, deposit: toMicros(sums.deposit), creditLimit, openHolds: toMicros(sums.hold) - toMicros(sums.hold_release) });
  const cap = account.cap_usd === null ? null : toMicros(account.cap_usd);
  return {
    periodKey: periodKeyOf(now),
    spent,
    cap,
    cash,
    grant,
    deposit: toMicros(sums.deposit),
    creditLimit,
    available,
    reason: blockReason(account.scheme, spent, cap, available),
  };
}

const enabled = (a: AccountRow | null): a is AccountRow & { scheme: NonNullable<AccountRow['scheme']> } => a !== null && a.scheme !== null;

function accountView(tenantId: string, planStatus: string, account: AccountRow | null, pos: Position | null) {
  if (!enabled(account) || pos === null) {
    return { tenant_id: tenantId, currency: 'USD' as const, billing_enabled: false, scheme: null, plan_status: planStatus, enforcement_mode: null, alert_thresholds: [], balance: null, cap: null };
  }
  return {
    tenant_id: tenantId,
    currency: 'USD' as const,
    billing_enabled: true,
    scheme: account.scheme,
    plan_status: planStatus,
    enforcement_mode: account.enforcement_mode,
    alert_thresholds: [...account.alert_thresholds].sort((a, b) => a - b),
    balance: { cash_usd: usd(pos.cash), grant_usd: usd(pos.grant), deposit_usd: usd(pos.deposit), credit_limit_usd: usd(pos.creditLimit), available_usd: usd(pos.available) },
    cap:
      pos.cap === null
        ? null
        : { scheme: account.scheme, period_key: pos.periodKey, limit_usd: usd(pos.cap), spent_usd: usd(pos.spent), used_pct: usedPct(pos.spent, pos.cap) },
  };
}

export type AccountView = ReturnType<typeof accountView>;

/** The account as GET /v1/billing/account shows it, read inside an open tenant transaction. */
export async function readAccountView(sql: SqlTx, tenantId: string, now = new Date()): Promise<AccountView> {
  const facts = await tenantFacts(sql, { from: now, to: now });
  if (!facts) throw notFound();
  const account = await readAccount(sql);
  return accountView(tenantId, facts.plan_status, account, enabled(account) ? await positionOf(sql, account, now) : null);
}

export async function getAccount(deps: AppDeps, tenantId: string) {
  return withTenantSql(deps.db, tenantId, (sql) => readAccountView(sql, tenantId));
}

/** One crossing as GET /v1/billing/alerts lists it. */
const alertView = (a: AlertRow) => ({
  threshold_pct: a.threshold_pct,
  scheme: a.scheme,
  enforcement_mode: a.enforcement_mode,
  spent_usd: usd(toMicros(a.spent_usd)),
  limit_usd: usd(toMicros(a.limit_usd)),
  crossed_at: a.crossed_at.toISOString(),
});

export async function getAlerts(deps: AppDeps, tenantId: string) {
  return withTenantSql(deps.db, tenantId, async (sql) => {
    const account = await readAccount(sql);
    if (!enabled(account) || account.cap_usd === null) return { tenant_id: tenantId, period_key: null, alerts: [] };
    const periodKey = periodKeyOf(new Date());
    return { tenant_id: tenantId, period_key: periodKey, alerts: (await listAlerts(sql, periodKey)).map(alertView) };
  });
}

/**
 * Announces a crossing in the transaction that recorded it: a `billing.threshold_crossed` frame on
 * the tenant's live floor (not a webhook: SPEC closes that catalog at six names) and a mail to each
 * active account admin, queued in mail_outbox. The frame's data is the alert as its GET lists it
 * plus its period; its event id is the alert row's. Only a row this transaction inserted is
 * announced, so the (tenant, period, threshold) key that records a crossing once announces it once.
 */
async function announceCrossing(deps: AppDeps, sql: SqlTx, tenantId: string, alert: AlertRow, admins: string[]): Promise<string[]> {
  await emitLiveEvent(sql, tenantId, {
    event: 'billing.threshold_crossed',
    eventId: alert.id,
    occurredAt: alert.crossed_at,
    data: { period_key: alert.period_key, ...alertView(alert) },
  });
  const queued: string[] = [];
  for (const to of admins) queued.push(await deps.mailer.enqueueSql(sql, tenantId, alertMail(to, alert)));
  return queued;
}

export interface Evaluation {
  blocked: BlockReason | null;
  crossed: number[];
  suspended: string[];
  restored: string[];
}

const SYSTEM = { type: 'system' as const, id: 'billing' };

/**
 * The enforcement step, to run after spend is recorded, after funds or settings change and at the
 * period rollover. Under the account lock it records the thresholds the period spend has reached
 * (each once per period, announced in the same transaction: announceCrossing), then sets or clears
 * the block. The alert mail is handed to its delivery workflow after commit. Campaigns move after commit through the
 * lifecycle service, as an API pause or resume would: running ones to suspended_balance while
 * blocked, suspended_balance ones back to running once not blocked (they were running when
 * suspended; paused campaigns are never touched).
 * The clock is read once the lock is held: an evaluation that waited on another one must not judge
 * spend committed while it waited as if it had not happened, and clear a block that is due.
 */
export async function evaluateBilling(deps: AppDeps, tenantId: string): Promise<Evaluation> {
  const decided = await withTenantSql(deps.db, tenantId, async (sql) => {
    const account = await readAccount(sql, true);
    const now = new Date();
    let reason: BlockReason | null = null;
    let crossed: number[] = [];
    const queued: string[] = [];
    if (enabled(account)) {
      const pos = await positionOf(sql, account, now);
      reason = pos.reason;
      if (pos.cap !== null && pos.cap > 0n) {
        const recorded = await recordCrossings(sql, pos.periodKey, reachedThresholds(account.alert_thresholds, pos.spent, pos.cap), {
          scheme: account.scheme,
          enforcement_mode: account.enforcement_mode,
          spent_usd: usd(pos.spent),
          limit_usd: usd(pos.cap),
        });
        const admins = recorded.length ? await accountAdminEmails(sql) : [];
        for (const alert of recorded) queued.push(...(await announceCrossing(deps, sql, tenantId, alert, admins)));
        crossed = recorded.map((a) => a.threshold_pct);
      }
    }
    // With SMTP configured, alert mail of the period that is still unsent is handed off again: its
    // hand-off may have been lost (a crash or a Temporal outage right after its commit), and a mail
    // already handed off starts nothing new. Without SMTP a delivery only keeps the mail, once.
    const mail = deps.mailer.smtp ? [...new Set([...queued, ...(await unsentMailIds(sql, ALERT_MAIL_KIND, monthOf(now).from))])] : queued;
    if (account && account.blocked_reason !== reason) {
      await setBlocked(sql, reason);
      if ((account.blocked_reason === null) !== (reason === null)) await movePlanStatus(sql, reason !== null);
    }
    const toMove = await campaignIdsIn(sql, reason ? 'running' : 'suspended_balance');
    return { reason, crossed, toMove, mail };
  });
  await handOffQueuedMail(deps, decided.mail.map((outboxId) => ({ tenantId, outboxId })));

  const moved: string[] = [];
  for (const id of decided.toMove) {
    try {
      await transitionCampaign(deps, tenantId, SYSTEM, id, decided.reason ? 'suspend_balance' : 'restore_balance');
      moved.push(id);
    } catch (err) {
      // A campaign another call moved meanwhile is left as that call put it; the next evaluation sees it.
      if (!(err instanceof AppError) || err.code === 'internal') deps.logger.error({ err: (err as Error).message, campaign_id: id }, 'billing enforcement could not move a campaign');
    }
  }
  return { blocked: decided.reason, crossed: decided.crossed, suspended: decided.reason ? moved : [], restored: decided.reason ? [] : moved };
}

/**
 * The hook for new dials and sends: a refusal while the tenant is blocked under hard_block (or no
 * mode, which reads as hard_block); graduated refuses nothing here, its campaigns are suspended.
 */
export async function billingRefusal(sql: SqlTx): Promise<AppError | null> {
  const row = await enabledAccountBlock(sql);
  if (!row?.blocked_reason || row.enforcement_mode === 'graduated') return null;
  return unprocessable(
    row.blocked_reason === 'cap_reached'
      ? 'billing: the period spend cap is reached; retry after a cap raise or the period rollover'
      : 'billing: prepaid funds are exhausted; retry after funds are added',
  );
}

interface Window {
  from: Date;
  to: Date;
}

const DAY_MS = 86_400_000;

function summaryWindow(q: { from?: string; to?: string }, now: Date): Window {
  const to = q.to ? new Date(q.to) : now;
  const from = q.from ? new Date(q.from) : new Date(to.getTime() - 30 * DAY_MS);
  // A rule across two parameters (SPEC: shape fine, semantics broken).
  if (from.getTime() >= to.getTime()) throw unprocessable("'from' must be before 'to'");
  return { from, to };
}

async function linesOf(sql: SqlTx, w: Window, minimums: boolean) {
  const facts = await tenantFacts(sql, w);
  if (!facts) throw notFound();
  const u = await meteredUsage(sql, w.from, w.to);
  const items = lineItems(
    {
      seats: facts.seats,
      houseDids: facts.house_dids,
      customerDids: facts.customer_dids,
      answeredMinutes: u.answered_minutes,
      inboundMinutes: u.inbound_minutes,
      smsSegments: u.sms_segments,
      smsCost: toMicros(u.sms_cost),
      aiCalls: u.ai_calls,
      aiCost: toMicros(u.ai_cost),
      voiceAiEnabled: facts.voice_ai_enabled,
      wavFiles: u.wav_files,
    },
    minimums,
  );
  return { facts, items };
}

const TIER_LABELS: Record<string, string> = {
  starter: 'Starter',
  growth: 'Growth',
  scale: 'Scale',
  enterprise: 'Enterprise',
  dialer_core: 'Dialer Core',
  compliance_pro: 'Compliance Pro (retired)',
  audit_shield: 'Audit Shield (retired)',
};

export async function billingSummary(deps: AppDeps, tenantId: string, q: { from?: string; to?: string }, now = new Date()) {
  const w = summaryWindow(q, now);
  const { facts, items } = await withTenantSql(deps.db, tenantId, (sql) => linesOf(sql, w, false));
  return {
    tenant_id: tenantId,
    tier: facts.tier,
    tier_label: TIER_LABELS[facts.tier] ?? facts.tier,
    voice_ai_enabled: facts.voice_ai_enabled,
    currency: 'USD' as const,
    period: { from: w.from.toISOString(), to: w.to.toISOString() },
    line_items: items,
    subtotal_usd: usd(subtotalOf(items)),
  };
}

export const SUMMARY_CSV_COLUMNS = ['kind', 'description', 'quantity', 'unit', 'unit_price_usd', 'amount_usd'] as const;

export async function billingInvoice(deps: AppDeps, tenantId: string, month: string, now = new Date()) {
  const w = monthWindow(month);
  if (!w) throw badRequest('month must be YYYY-MM');
  if (w.from.getTime() > now.getTime()) throw unprocessable(`month ${month} has not started`);
  const { facts, items } = await withTenantSql(deps.db, tenantId, (sql) => linesOf(sql, w, true));
  const subtotal = subtotalOf(items);
  return {
    tenant_id: tenantId,
    month,
    period: { from: w.from.toISOString(), to: w.to.toISOString() },
    status: w.to.getTime() <= now.getTime() ? ('closed' as const) : ('open' as const),
    currency: 'USD' as const,
    tier: facts.tier,
    voice_ai_enabled: facts.voice_ai_enabled,
    line_items: items,
    subtotal_usd: usd(subtotal),
    tax_usd: null,
    total_usd: usd(subtotal),
  };
}


export function summaryCsv(summary: { line_items: LineItem[] }): string {
  return [[...SUMMARY_CSV_COLUMNS], ...summary.line_items.map((i) => SUMMARY_CSV_COLUMNS.map((c) => i[c]))].map((fields) => csvLine(fields)).join('');
}
