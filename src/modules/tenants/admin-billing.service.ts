import type { AppDeps } from '../../deps';
import { appendAuditSql } from '../../lib/audit';
import { notFound, unprocessable } from '../../lib/errors';
import { withTenantSql, type SqlTx } from '../../lib/tenancy';
import { insertLedgerEntry, lockAccount, updateAccount, type AccountPatch } from '../billing/billing.repository';
import {
  ENFORCEMENT_MODES,
  LEDGER_KINDS,
  MAX_ALERT_THRESHOLDS,
  parseAmountInput,
  usd,
  type EnforcementMode,
  type LedgerKind,
} from '../billing/billing.rules';
import { evaluateBilling, readAccountView } from '../billing/billing.service';
import type { AdminCreditInput, AdminPlanInput } from '../billing/billing.schemas';
import { tenantExists } from './tenant.repository';

function amountOf(field: string, value: string | number): string {
  const micros = parseAmountInput(value);
  if (micros === null) throw unprocessable(`${field} must be a non-negative decimal with at most 4 decimal places and 10 integer digits`);
  return usd(micros);
}

/**
 * One operator write on a tenant's billing: under the account lock (created on first use), audited
 * as operator. Enforcement then runs on its own, so a raised cap, added funds or billing turned off
 * resumes suspended campaigns, and a lowered cap suspends running ones.
 */
async function operatorWrite<T>(deps: AppDeps, tenantId: string, action: string, write: (sql: SqlTx) => Promise<{ result: T; payload: Record<string, unknown> }>) {
  const result = await withTenantSql(deps.db, tenantId, async (sql) => {
    if (!(await tenantExists(sql, tenantId))) throw notFound();
    await lockAccount(sql);
    const done = await write(sql);
    await appendAuditSql(sql, tenantId, [{ actorType: 'operator', actorId: null, action, subjectType: 'tenant', subjectId: tenantId, payload: done.payload }]);
    return done.result;
  });
  await evaluateBilling(deps, tenantId);
  const account = await withTenantSql(deps.db, tenantId, (sql) => readAccountView(sql, tenantId));
  return { result, account };
}

export async function putPlan(deps: AppDeps, tenantId: string, body: AdminPlanInput) {
  const patch: AccountPatch = { scheme: body.scheme };
  if (body.cap_usd !== undefined) patch.cap_usd = body.cap_usd === null ? null : amountOf('cap_usd', body.cap_usd);
  if (body.credit_limit_usd !== undefined) patch.credit_limit_usd = amountOf('credit_limit_usd', body.credit_limit_usd);
  const { account } = await operatorWrite(deps, tenantId, 'billing.plan_set', async (sql) => {
    await updateAccount(sql, patch);
    return { result: null, payload: { ...patch } };
  });
  return { account };
}

export async function addCredit(deps: AppDeps, tenantId: string, body: AdminCreditInput) {
  if (!(LEDGER_KINDS as readonly string[]).includes(body.kind)) throw unprocessable(`kind must be one of ${LEDGER_KINDS.join(', ')}`);
  const amount = amountOf('amount_usd', body.amount_usd);
  if (parseAmountInput(amount) === 0n) throw unprocessable('amount_usd must be above 0');
  const { result, account } = await operatorWrite(deps, tenantId, 'billing.credit_added', async (sql) => {
    const entry = await insertLedgerEntry(sql, body.kind as LedgerKind, amount, body.note ?? null);
    return { result: entry, payload: { entry_id: entry.id, kind: entry.kind, amount_usd: amount } };
  });
  return {
    entry: { id: result.id, kind: result.kind, amount_usd: usd(parseAmountInput(result.amount_usd) ?? 0n), note: result.note, created_at: result.created_at.toISOString() },
    account,
  };
}

export async function putEnforcementMode(deps: AppDeps, tenantId: string, mode: string | null) {
  if (mode !== null && !(ENFORCEMENT_MODES as readonly string[]).includes(mode)) throw unprocessable(`mode must be one of ${ENFORCEMENT_MODES.join(', ')} or null`);
  const { account } = await operatorWrite(deps, tenantId, 'billing.enforcement_mode_set', async (sql) => {
    await updateAccount(sql, { enforcement_mode: mode as EnforcementMode | null });
    return { result: null, payload: { mode } };
  });
  return { account };
}

export async function putAlertThresholds(deps: AppDeps, tenantId: string, thresholds: number[]) {
  if (thresholds.length > MAX_ALERT_THRESHOLDS) throw unprocessable(`at most ${MAX_ALERT_THRESHOLDS} thresholds`);
  if (thresholds.some((t) => t < 1 || t > 100)) throw unprocessable('each threshold must be an integer percentage from 1 to 100');
  if (new Set(thresholds).size !== thresholds.length) throw unprocessable('thresholds must be distinct');
  const sorted = [...thresholds].sort((a, b) => a - b);
  const { account } = await operatorWrite(deps, tenantId, 'billing.alert_thresholds_set', async (sql) => {
    await updateAccount(sql, { alert_thresholds: sorted });
    return { result: null, payload: { thresholds: sorted } };
  });
  return { account };
}
