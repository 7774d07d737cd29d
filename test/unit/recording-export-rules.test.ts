import { effectiveFilters, filterHash, normalizedFilters, resolveWindow } from '../../src/modules/recording-exports/recording-export.rules';
import { escapeLike, paramsInto, recordingFilterConditions } from '../../src/modules/recordings/recording.filters';

const DAY_MS = 86_400_000;

describe('recording export request rules', () => {
  it('hashes the same filters spelled differently alike, and different filters apart', () => {
    const agent = '6F1C2F0E-2B8A-4C1E-9A57-1F0F8A7C9D10';
    const a = filterHash({ from: '2026-10-01T12:00:00Z', agent_id: agent, q: ' ACC-1 ', refresh: true });
    const b = filterHash({ from: '2026-10-01T08:00:00.000-04:00', agent_id: agent.toLowerCase(), q: 'acc-1' });
    expect(a).toBe(b);
    expect(filterHash({ from: '2026-10-01T12:00:00Z' })).not.toBe(filterHash({ to: '2026-10-01T12:00:00Z' }));
    expect(filterHash({ disposition: 'Busy' })).not.toBe(filterHash({ disposition: 'busy' }));
    expect(normalizedFilters({})).toEqual({ from: null, to: null, agent_id: null, campaign_id: null, disposition: null, q: null });
  });

  it('defaults to now and the 30 days before it, and measures the range against the limit', () => {
    const now = new Date('2026-11-24T00:00:00Z');
    expect(resolveWindow({}, now, 366)).toEqual({ from: new Date(now.getTime() - 30 * DAY_MS), to: now, inOrder: true, tooWide: false });
    const to = '2026-06-01T00:00:00Z';
    expect(resolveWindow({ from: new Date(Date.parse(to) - 366 * DAY_MS).toISOString(), to }, now, 366).tooWide).toBe(false);
    expect(resolveWindow({ from: new Date(Date.parse(to) - 366 * DAY_MS - 1).toISOString(), to }, now, 366).tooWide).toBe(true);
    expect(resolveWindow({ from: '2026-12-01T00:00:00Z' }, now, 366).inOrder).toBe(false);
    expect(resolveWindow({ to }, now, 366).from).toEqual(new Date(Date.parse(to) - 30 * DAY_MS));
  });

  it('keeps only the filters given, with the resolved window', () => {
    const window = { from: new Date('2026-10-01T00:00:00Z'), to: new Date('2026-10-02T00:00:00Z') };
    expect(effectiveFilters({ q: 'x', refresh: true }, window)).toEqual({ from: '2026-10-01T00:00:00.000Z', to: '2026-10-02T00:00:00.000Z', q: 'x' });
  });
});

describe('recording filters', () => {
  it('escapes LIKE wildcards and the escape character', () => {
    expect(escapeLike('50%_off\\x')).toBe('50\\%\\_off\\\\x');
  });

  it('builds parameterized conditions only for the filters given; q never touches the full number', () => {
    const values: unknown[] = ['tenant'];
    const where = recordingFilterConditions({ agent_id: 'a', q: '4321' }, paramsInto(values));
    expect(where[0]).toBe('r.agent_id = $2::uuid');
    expect(where[1]).toContain(`('***' || right(r.phone_number, 4)) ILIKE $3::text`);
    expect(where[1]).not.toMatch(/r\.phone_number\s+I?LIKE/);
    expect(values).toEqual(['tenant', 'a', '%4321%']);
    expect(recordingFilterConditions({}, paramsInto([]))).toEqual([]);
  });
});
