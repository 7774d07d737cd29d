import { createHash } from 'node:crypto';
import { canonicalJson } from '../../lib/canonical-json';
import type { RecordingFilters } from '../recordings/recording.filters';

/** SPEC "Limits": at most this many recordings in one archive, newest first. */
export const EXPORT_ROW_CAP = 50_000;
/** The window when the request names neither from nor to (design). */
export const DEFAULT_WINDOW_DAYS = 30;
export const STALE_CLAIM_ERROR = 'stale claim released';

const DAY_MS = 86_400_000;

export interface ExportRequest extends RecordingFilters {
  refresh?: boolean;
}

/**
 * The request's filters in one spelling: instants in UTC milliseconds, ids lower case, q trimmed
 * and lower-cased (it matches case-insensitively), absent filters null. An omitted from or to
 * stays null here ("the default window at request time"), so repeating the same request inside
 * the dedup window finds the archive produced for it.
 */
export function normalizedFilters(request: ExportRequest): Record<string, string | null> {
  const instant = (v: string | undefined) => (v === undefined ? null : new Date(v).toISOString());
  return {
    from: instant(request.from),
    to: instant(request.to),
    agent_id: request.agent_id?.toLowerCase() ?? null,
    campaign_id: request.campaign_id?.toLowerCase() ?? null,
    disposition: request.disposition ?? null,
    q: request.q?.trim().toLowerCase() ?? null,
  };
}

export function filterHash(request: ExportRequest): string {
  return createHash('sha256').update(canonicalJson(normalizedFilters(request)), 'utf8').digest('hex');
}

/**
 * The window the export covers: to defaults to now, from to DEFAULT_WINDOW_DAYS before to.
 * `tooWide` when it spans more than maxDays days; from after to is the caller's 422.
 */
export function resolveWindow(request: ExportRequest, now: Date, maxDays: number): { from: Date; to: Date; inOrder: boolean; tooWide: boolean } {
  const to = request.to !== undefined ? new Date(request.to) : now;
  const from = request.from !== undefined ? new Date(request.from) : new Date(to.getTime() - DEFAULT_WINDOW_DAYS * DAY_MS);
  return { from, to, inOrder: from.getTime() <= to.getTime(), tooWide: to.getTime() - from.getTime() > maxDays * DAY_MS };
}

/** The filters the workflow applies: the resolved window plus the other filters as given. */
export function effectiveFilters(request: ExportRequest, window: { from: Date; to: Date }): RecordingFilters {
  const filters: RecordingFilters = { from: window.from.toISOString(), to: window.to.toISOString() };
  if (request.agent_id !== undefined) filters.agent_id = request.agent_id;
  if (request.campaign_id !== undefined) filters.campaign_id = request.campaign_id;
  if (request.disposition !== undefined) filters.disposition = request.disposition;
  if (request.q !== undefined) filters.q = request.q;
  return filters;
}

export const exportStorageKey = (tenantId: string, exportId: string) => `exports/${tenantId}/${exportId}.zip`;
export const exportDownloadName = (exportId: string) => `recordings-export-${exportId}.zip`;
