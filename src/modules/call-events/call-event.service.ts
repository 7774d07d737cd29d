import type { AppDeps } from '../../deps';
import { withTenantSql } from '../../lib/tenancy';
import { appendCallEvent, type CallEventFact } from './call-event.repository';

/**
 * Writes one event of a call's timeline in its own tenant transaction. Throws when it cannot be
 * written: an activity is then retried (keyed events are written once); other callers decide.
 */
export async function recordCallEvent(deps: Pick<AppDeps, 'db'>, tenantId: string, callAttemptId: string, fact: CallEventFact): Promise<boolean> {
  return withTenantSql(deps.db, tenantId, (sql) => appendCallEvent(sql, callAttemptId, fact));
}
