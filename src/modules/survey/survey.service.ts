import type { AppDeps } from '../../deps';
import { badRequest, notFound, unprocessable } from '../../lib/errors';
import { withTenantSql } from '../../lib/tenancy';
import { countAnsweredCalls, pressBreakdown, type PressRow } from './survey.repository';
import { DIGITS } from './survey.schemas';

interface MenuResult {
  menu_path: string;
  presses: number;
  calls: number;
  digits: Record<string, number>;
  actions: Record<string, number>;
  unmatched: number;
}

const BY_DIGIT = 0b001;
const BY_ACTION = 0b010;
const BY_MENU = 0b011;
const TOTAL = 0b111;

const KEY_ORDER = new Map<string, number>(DIGITS.map((d, i) => [d, i]));

/** Menu paths in key order (0-9, *, #), which walks the menu tree depth first from the root. */
function compareMenuPaths(a: string, b: string): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const diff = KEY_ORDER.get(a[i]!)! - KEY_ORDER.get(b[i]!)!;
    if (diff !== 0) return diff;
  }
  return a.length - b.length;
}

function parseInstant(name: string, value: string | undefined): Date | null {
  if (value === undefined) return null;
  const at = new Date(value);
  if (Number.isNaN(at.getTime())) throw badRequest(`field '${name}': invalid RFC 3339 date-time`);
  return at;
}

/**
 * The key-press distribution of a campaign's calls in [from, to): answered calls by started_at,
 * presses by pressed_at, so a call answered just before the window can still contribute presses.
 * Any campaign type is answered: a campaign without IVR or survey keys reports zeros.
 */
export async function surveyResults(deps: AppDeps, tenantId: string, campaignId: string, query: { from?: string; to?: string }) {
  const from = parseInstant('from', query.from);
  const to = parseInstant('to', query.to);
  if (from && to && from > to) throw unprocessable("'from' must not be after 'to'");

  return withTenantSql(deps.db, tenantId, async (sql) => {
    const callsAnswered = await countAnsweredCalls(sql, campaignId, from, to);
    if (callsAnswered === null) throw notFound();
    const rows = await pressBreakdown(sql, campaignId, from, to);

    const menus = new Map<string, MenuResult>();
    const menu = (path: string) => {
      let entry = menus.get(path);
      if (!entry) {
        entry = { menu_path: path, presses: 0, calls: 0, digits: {}, actions: {}, unmatched: 0 };
        menus.set(path, entry);
      }
      return entry;
    };
    let total: PressRow | undefined;
    const digitRows: PressRow[] = [];
    for (const row of rows) {
      if (row.g === TOTAL) total = row;
      else if (row.g === BY_MENU) Object.assign(menu(row.menu_path!), { presses: row.presses, calls: row.calls });
      else if (row.g === BY_DIGIT) digitRows.push(row);
      else if (row.g === BY_ACTION) {
        if (row.action === null) menu(row.menu_path!).unmatched = row.presses;
        else menu(row.menu_path!).actions[row.action] = row.presses;
      }
    }
    // '*' and '#' are not integer-like, so a JS object lists them in insertion order after 0-9.
    digitRows.sort((a, b) => KEY_ORDER.get(a.digit!)! - KEY_ORDER.get(b.digit!)!);
    for (const row of digitRows) menu(row.menu_path!).digits[row.digit!] = row.presses;

    return {
      campaign_id: campaignId.toLowerCase(),
      from: from?.toISOString() ?? null,
      to: to?.toISOString() ?? null,
      calls_answered: callsAnswered,
      calls_with_keypress: total?.calls ?? 0,
      keypresses: total?.presses ?? 0,
      optouts: total?.optouts ?? 0,
      menus: [...menus.values()].sort((a, b) => compareMenuPaths(a.menu_path, b.menu_path)),
    };
  });
}
