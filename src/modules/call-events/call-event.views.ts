import type { CallEventRow } from './call-event.repository';

/** One timeline entry: `{at, event, ...data}` (CONTRACT section 11). */
export type TimelineEntry = { at: string; event: string } & Record<string, unknown>;

export function timelineOf(rows: CallEventRow[]): TimelineEntry[] {
  return rows.map((r) => ({ ...r.data, at: new Date(r.at).toISOString(), event: r.event }));
}

/** The timelines of several calls, by call attempt id, each in order. */
export function timelinesByCall(rows: CallEventRow[]): Map<string, TimelineEntry[]> {
  const out = new Map<string, TimelineEntry[]>();
  for (const r of rows) {
    const list = out.get(r.call_attempt_id) ?? [];
    list.push(...timelineOf([r]));
    out.set(r.call_attempt_id, list);
  }
  return out;
}
