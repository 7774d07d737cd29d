import { createHash } from 'node:crypto';
import type { AppDeps } from '../../deps';
import { AppError } from '../../lib/errors';
import { withTenantSql, type SqlTx } from '../../lib/tenancy';
import { claimDialableLeads, type Lead } from '../leads/lead.repository';
import { smsProviderGateway } from '../sms-providers/sms-provider.resolve';
import { formatAmount, mergeSmsBody } from '../sms/merge';
import { sendsLastSecond } from '../sms/sms.repository';
import { gatewayOf, sendSms } from '../sms/sms.service';
import { REDIAL_AFTER_MS, type RunCounters, type TickInput, type TickResult } from './dial-tick.service';
import { activePoolNumbers } from './dial-tick.repository';
import {
  activeOwnNumbers,
  countBlastMessages,
  debtMergeFields,
  earlierOfTick,
  pushNextDialableAt,
  readBlastCampaign,
  textedRecently,
  type BlastCampaign,
} from './sms-blast.repository';

/**
 * Sends stop after this long so a tick finishes well inside the dialTick activity's 15 s
 * start-to-close timeout; the leads not reached stay due and the next tick takes them.
 */
export const SMS_TICK_BUDGET_MS = 10_000;

/**
 * The idempotency key of one blast message: a retried tick (same tick key) replays it and
 * sendSms answers the existing message as a duplicate instead of texting again.
 */
export function blastClientRef(campaignId: string, debtId: string, tickKey: string): string {
  return `blast:${campaignId}:${debtId}:${tickKey}`;
}

interface Claimed {
  state: string | null;
  idle: string | null;
  tokens: number | null;
  leads: Array<Lead & { body: string; from: string }>;
}

/**
 * The numbers this tick may text from (CONTRACT.md section 13: only the tenant's own active DIDs):
 * the active DIDs of caller_id_pool, or with an empty pool those of caller_ids that are active DIDs
 * of the tenant. Re-resolved every tick, so a parked number stops at once.
 */
function activeSenders(sql: SqlTx, campaign: BlastCampaign): Promise<string[]> {
  return campaign.caller_id_pool.length > 0 ? activePoolNumbers(sql, campaign.caller_id_pool) : activeOwnNumbers(sql, campaign.caller_ids);
}

/** One sender per debt while the senders stay the same: a consumer's texts come from one number. */
function senderOf(senders: string[], debtId: string): string {
  const h = createHash('sha256').update(debtId).digest();
  return senders[h.readUInt32BE(0) % senders.length]!;
}

/** Outcome of one lead: when the debt may be texted again, and how the tick counts it. */
type LeadOutcome = 'sent' | 'blocked' | 'failed';

/** Why the tick stops sending early; the lead that met it is left untouched (still due). */
type Stop = 'sms_spend_cap_reached' | 'capacity_full' | 'sms_provider_unconfigured' | 'sms_sender_unavailable';

/** The merge values of the claimed debts: {{state}} is the debt's state, {{amount}} its amount as "1234.50". */
async function mergeValues(sql: SqlTx, debtIds: string[]) {
  const rows = await debtMergeFields(sql, debtIds);
  return new Map(
    rows.map((r) => [
      r.id,
      { debt_ref: r.external_ref, consumer_ref: r.consumer_ref, account_number: r.account_number, amount: formatAmount(BigInt(r.amount_cents)), state: r.state },
    ]),
  );
}

async function pushNextDialable(deps: AppDeps, input: TickInput, debtIds: string[], delayMs: number, now: Date): Promise<void> {
  if (!debtIds.length) return;
  await withTenantSql(deps.db, input.tenantId, (sql) => pushNextDialableAt(sql, debtIds, now, delayMs));
}

/**
 * Settles what an earlier try of this tick already sent (a worker died or the activity timed out
 * after a send and before the debt was pushed), then claims this tick's leads with their merged bodies.
 */
async function claim(deps: AppDeps, input: TickInput, now: Date): Promise<Claimed & { earlier: Array<{ debt_id: string; status: string }> }> {
  return withTenantSql(deps.db, input.tenantId, async (sql) => {
    const campaign = await readBlastCampaign(sql, input.campaignId);
    const none = (idle: string, tokens: number | null = null) => ({ state: campaign?.state ?? null, idle, tokens, leads: [], earlier: [] });
    if (!campaign) return none('campaign_gone');
    if (campaign.state !== 'running') return none('not_running');
    if (!campaign.sms_body) return none('sms_body_missing');
    const senders = await activeSenders(sql, campaign);

    const earlier = await earlierOfTick(sql, input.campaignId, input.tickKey);
    // An earlier try's sends are settled whatever the senders are now; nothing new goes out without one.
    if (senders.length === 0) return { ...none('sms_sender_unavailable'), earlier };
    const cpsLeft = campaign.max_cps === null ? null : Math.max(0, campaign.max_cps - (await sendsLastSecond(sql, now)));
    const want = Math.min(cpsLeft ?? Infinity, input.options.batch_size - earlier.length);
    if (want <= 0) return { ...none(cpsLeft === 0 ? 'capacity_full' : 'batch_done', cpsLeft), earlier };
    const claimed = await claimDialableLeads(sql, input.campaignId, now, want, earlier.map((e) => e.debt_id));
    const recent = await textedRecently(sql, input.campaignId, claimed.map((l) => l.debtId), now, REDIAL_AFTER_MS);
    const recentIds = new Set(recent.map((r) => r.debt_id));
    earlier.push(...recent);
    const leads = claimed.filter((l) => !recentIds.has(l.debtId));
    const values = await mergeValues(sql, leads.map((l) => l.debtId));
    const body = campaign.sms_body;
    return {
      state: campaign.state,
      idle: leads.length ? null : 'no_dialable_leads',
      tokens: cpsLeft,
      leads: leads.map((l) => ({ ...l, body: mergeSmsBody(body, values.get(l.debtId) ?? {}), from: senderOf(senders, l.debtId) })),
      earlier,
    };
  });
}

/** A ledger status that closed a message without delivery (the provider refused or could not be reached). */
const FAILED_STATUSES = new Set(['failed', 'undelivered']);

/**
 * One tick of a running sms_blast campaign. Leads are claimed as the voice loop claims them
 * (`FOR UPDATE SKIP LOCKED`, batch_size, one number per batch), capped by the tenant's max_cps
 * minus the SMS sends of the last second, and each gets the campaign's sms_body, merged, from one
 * of the campaign's active DIDs (activeSenders; none active: nothing is sent, the leads stay due), through
 * sendSms (spend cap, engine, queued row, provider, segment debit) with a client_ref derived from
 * the tick key, so a retried tick never texts a debt twice. A sent message pushes the debt
 * REDIAL_AFTER_MS; an engine refusal or a provider failure pushes it blocked_cooldown_ms. A spend
 * cap, the max_cps brake or a missing provider ends the tick early with the lead left due.
 * Refusals are counted, never thrown: `blocked` = engine refusals, `notPlaced` = provider failures.
 */
export async function smsBlastTick(deps: AppDeps, input: TickInput, now: Date = new Date()): Promise<TickResult> {
  const started = Date.now();
  const claimed = await claim(deps, input, now);

  // A previous try of this tick got these far: the ledger says what happened; nothing is sent again.
  const earlierFailed = claimed.earlier.filter((e) => FAILED_STATUSES.has(e.status)).map((e) => e.debt_id);
  const earlierDone = claimed.earlier.filter((e) => !FAILED_STATUSES.has(e.status)).map((e) => e.debt_id);

  const gateway = gatewayOf(deps, smsProviderGateway);
  const actor = { type: 'workflow', id: input.workflowId };
  const pushed: Record<LeadOutcome, string[]> = { sent: [...earlierDone], blocked: [], failed: [...earlierFailed] };
  let placed = 0;
  let stop: Stop | 'tick_budget' | null = null;
  for (const lead of claimed.leads) {
    if (Date.now() - started > SMS_TICK_BUDGET_MS) {
      stop = 'tick_budget';
      break;
    }
    try {
      const result = await sendSms(deps, gateway, input.tenantId, actor, {
        to: lead.phone,
        from: lead.from,
        body: lead.body,
        client_ref: blastClientRef(input.campaignId, lead.debtId, input.tickKey),
        debt_id: lead.debtId,
        campaign_id: input.campaignId,
        consumer_ref: lead.consumerRef,
      });
      const status = result.sms_message?.status ?? 'queued';
      if (FAILED_STATUSES.has(status)) {
        pushed.failed.push(lead.debtId);
      } else {
        pushed.sent.push(lead.debtId);
        if (!result.duplicate) placed += 1;
      }
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      if (err.code === 'compliance_blocked') {
        pushed.blocked.push(lead.debtId);
        continue;
      }
      if (err.code === 'provider_error' || err.code === 'sms_provider_base_url_rejected') {
        // The ledger holds the message with its failed transition; nothing was charged.
        deps.logger.warn({ campaign_id: input.campaignId, debt_id: lead.debtId, code: err.code }, 'sms_blast send failed at the provider');
        pushed.failed.push(lead.debtId);
        // A rejected endpoint fails every send alike: stop here rather than record a failure per lead.
        if (err.code === 'sms_provider_base_url_rejected') {
          stop = 'sms_provider_unconfigured';
          break;
        }
        continue;
      }
      if (err.code === 'sms_spend_cap_exceeded') stop = 'sms_spend_cap_reached';
      // The sender was parked after the claim read it: the lead stays due for a tick with an active one.
      else if (err.code === 'unprocessable') stop = 'sms_sender_unavailable';
      else if (err.code === 'throttled') stop = 'capacity_full';
      else if (err.code === 'sms_provider_unconfigured') stop = 'sms_provider_unconfigured';
      else throw err;
      deps.logger.warn({ campaign_id: input.campaignId, reason: stop }, 'sms_blast tick stopped early');
      break;
    }
  }

  await pushNextDialable(deps, input, pushed.sent, REDIAL_AFTER_MS, now);
  await pushNextDialable(deps, input, [...pushed.blocked, ...pushed.failed], input.options.blocked_cooldown_ms, now);

  return {
    state: claimed.state,
    placed,
    blocked: pushed.blocked.length,
    reaped: 0,
    notPlaced: pushed.failed.length - earlierFailed.length,
    idle: stop ?? claimed.idle,
    tokens: claimed.tokens === null ? null : Math.max(0, claimed.tokens - placed - (pushed.failed.length - earlierFailed.length)),
    overDialAllowed: false,
    pacing: input.pacing,
    run: await smsRunCounters(deps, input.tenantId, input.campaignId, new Date(input.runStartedAt)),
  };
}

/**
 * The run's counters for a text campaign, from the SMS ledger: `dialed` = messages recorded,
 * `finished` = those the provider answered (sent, delivered, undelivered or failed), `in_flight`
 * = still queued. The voice-only counters stay 0.
 */
export async function smsRunCounters(deps: AppDeps, tenantId: string, campaignId: string, since: Date): Promise<RunCounters> {
  const row = await withTenantSql(deps.db, tenantId, (sql) => countBlastMessages(sql, campaignId, since));
  const dialed = row?.dialed ?? 0;
  const finished = row?.finished ?? 0;
  return { dialed, finished, reaped: 0, in_flight: dialed - finished, connected: 0, abandoned: 0 };
}
