import {
  DEFAULT_ANSWER_MS,
  DEFAULT_TALK_MS,
  linesToDial,
  MAX_HANDLE_MS,
  MAX_LEAD_MS,
  MIN_HANDLE_SAMPLES,
  MIN_LEAD_MS,
  nextPlannedGainAt,
  plannedStaffing,
  staffingHorizons,
  type ShiftSeat,
} from '../../src/modules/dialer/pacing';

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const NOW = Date.parse('2026-11-27T09:00:00.000Z');
/** A line dialed now is answered 15 s later and holds its seat 3 min after that. */
const horizons = { leadMs: 15 * SECOND, handleMs: 3 * MINUTE };
const EDGE = horizons.leadMs + horizons.handleMs;

function shift(agentId: string, startMs: number, endMs: number, where: Partial<Pick<ShiftSeat, 'dialable' | 'engaged'>> = {}): ShiftSeat {
  return { agentId, startsAt: NOW + startMs, endsAt: NOW + endMs, dialable: where.dialable ?? false, engaged: where.engaged ?? false };
}
const seated = { dialable: true };
const busy = { engaged: true };

describe('plannedStaffing: seats leaving', () => {
  it('counts a dialable seat whose shift ends before a line dialed now would be done with it', () => {
    expect(plannedStaffing(NOW, horizons, [shift('a', -4 * HOUR, 2 * MINUTE, seated)])).toEqual({ leaving: 1, arriving: 0 });
    expect(plannedStaffing(NOW, horizons, [shift('a', -4 * HOUR, EDGE - 1, seated)])).toEqual({ leaving: 1, arriving: 0 });
  });

  it('does not count a seat whose shift lasts past the line, to the millisecond', () => {
    expect(plannedStaffing(NOW, horizons, [shift('a', -4 * HOUR, EDGE, seated)])).toEqual({ leaving: 0, arriving: 0 });
    expect(plannedStaffing(NOW, horizons, [shift('a', -4 * HOUR, 4 * HOUR, seated)])).toEqual({ leaving: 0, arriving: 0 });
  });

  it('measures the edge with both horizons: a longer handle time reaches further into the shift', () => {
    const ending = [shift('a', -HOUR, 10 * MINUTE, seated)];
    expect(plannedStaffing(NOW, horizons, ending).leaving).toBe(0);
    expect(plannedStaffing(NOW, { leadMs: 15 * SECOND, handleMs: 10 * MINUTE }, ending).leaving).toBe(1);
    expect(plannedStaffing(NOW, { leadMs: 0, handleMs: 10 * MINUTE }, ending).leaving).toBe(0);
  });

  it('joins back-to-back and overlapping shifts into one stretch of work', () => {
    expect(plannedStaffing(NOW, horizons, [shift('a', -4 * HOUR, MINUTE, seated), shift('a', MINUTE, 4 * HOUR, seated)]).leaving).toBe(0);
    expect(plannedStaffing(NOW, horizons, [shift('a', MINUTE, 4 * HOUR, seated), shift('a', -4 * HOUR, 2 * MINUTE, seated)]).leaving).toBe(0);
    // A gap, however short, ends the stretch: the seat leaves before the next shift.
    expect(plannedStaffing(NOW, horizons, [shift('a', -4 * HOUR, MINUTE, seated), shift('a', MINUTE + 1, 4 * HOUR, seated)]).leaving).toBe(1);
    // Joined, the stretch still ends inside the edge.
    expect(plannedStaffing(NOW, horizons, [shift('a', -4 * HOUR, MINUTE, seated), shift('a', 30 * SECOND, 2 * MINUTE, seated)]).leaving).toBe(1);
  });

  it('ignores a seat with no shift now: present without a plan, early for its next shift, or staying past the end', () => {
    expect(plannedStaffing(NOW, horizons, [shift('a', 2 * MINUTE, 4 * HOUR, seated)])).toEqual({ leaving: 0, arriving: 0 });
    expect(plannedStaffing(NOW, horizons, [shift('a', -4 * HOUR, -MINUTE, seated)])).toEqual({ leaving: 0, arriving: 0 });
    expect(plannedStaffing(NOW, horizons, [])).toEqual({ leaving: 0, arriving: 0 });
  });

  it('counts each leaving agent once, and only the dialable ones', () => {
    expect(
      plannedStaffing(NOW, horizons, [
        shift('a', -4 * HOUR, MINUTE, seated),
        shift('b', -4 * HOUR, 2 * MINUTE, seated),
        shift('c', -4 * HOUR, 2 * MINUTE, busy), // on a call: not a seat pacing counts anyway
        shift('d', -4 * HOUR, 2 * MINUTE), // absent
        shift('e', -4 * HOUR, 4 * HOUR, seated),
      ]),
    ).toEqual({ leaving: 2, arriving: 0 });
  });
});

describe('plannedStaffing: agents arriving', () => {
  it('counts an agent off shift and away whose shift starts before a line dialed now would be answered', () => {
    expect(plannedStaffing(NOW, horizons, [shift('a', 10 * SECOND, 8 * HOUR)])).toEqual({ leaving: 0, arriving: 1 });
    expect(plannedStaffing(NOW, horizons, [shift('a', horizons.leadMs, 8 * HOUR)])).toEqual({ leaving: 0, arriving: 1 });
  });

  it('does not count a start beyond the lead time', () => {
    expect(plannedStaffing(NOW, horizons, [shift('a', horizons.leadMs + 1, 8 * HOUR)]).arriving).toBe(0);
    expect(plannedStaffing(NOW, horizons, [shift('a', HOUR, 8 * HOUR)]).arriving).toBe(0);
  });

  it('does not count a late agent: a shift already started without them is not a seat', () => {
    expect(plannedStaffing(NOW, horizons, [shift('a', 0, 8 * HOUR)]).arriving).toBe(0);
    expect(plannedStaffing(NOW, horizons, [shift('a', -MINUTE, 8 * HOUR)]).arriving).toBe(0);
  });

  it('does not count an agent already on shift whose next shift follows on, nor one busy with a call or already seated', () => {
    expect(plannedStaffing(NOW, horizons, [shift('a', -4 * HOUR, 10 * SECOND), shift('a', 10 * SECOND, 4 * HOUR)]).arriving).toBe(0);
    expect(plannedStaffing(NOW, horizons, [shift('a', 10 * SECOND, 8 * HOUR, busy)]).arriving).toBe(0);
    expect(plannedStaffing(NOW, horizons, [shift('a', 10 * SECOND, 8 * HOUR, seated)])).toEqual({ leaving: 0, arriving: 0 });
  });

  it('counts an agent between two shifts whose next one starts within the lead', () => {
    expect(plannedStaffing(NOW, horizons, [shift('a', -4 * HOUR, -30 * MINUTE), shift('a', 5 * SECOND, 4 * HOUR)]).arriving).toBe(1);
  });

  it('counts leaving and arriving agents of one floor together', () => {
    expect(
      plannedStaffing(NOW, horizons, [
        shift('a', -8 * HOUR, MINUTE, seated),
        shift('b', 5 * SECOND, 8 * HOUR),
        shift('c', 14 * SECOND, 8 * HOUR),
        shift('d', 16 * SECOND, 8 * HOUR),
      ]),
    ).toEqual({ leaving: 1, arriving: 2 });
  });
});

describe('staffingHorizons', () => {
  const sample = { calls: MIN_HANDLE_SAMPLES, meanAnswerMs: 12_345.4, meanTalkMs: 240_000, wrapUpSeconds: 30 };

  it('uses the tenant’s own answer and talk times, with the wrap-up cap after each talk', () => {
    expect(staffingHorizons(sample)).toEqual({ leadMs: 12_345, handleMs: 270_000 });
  });

  it('falls back to the defaults until enough calls were handled', () => {
    expect(staffingHorizons({ ...sample, calls: MIN_HANDLE_SAMPLES - 1 })).toEqual({ leadMs: DEFAULT_ANSWER_MS, handleMs: DEFAULT_TALK_MS + 30_000 });
    expect(staffingHorizons({ calls: 0, meanAnswerMs: null, meanTalkMs: null, wrapUpSeconds: 0 })).toEqual({ leadMs: DEFAULT_ANSWER_MS, handleMs: DEFAULT_TALK_MS });
  });

  it('keeps the lead between a person’s answer and the ring timeout, and the handle time under its ceiling', () => {
    expect(staffingHorizons({ ...sample, meanAnswerMs: 300 }).leadMs).toBe(MIN_LEAD_MS);
    expect(staffingHorizons({ ...sample, meanAnswerMs: 120_000 }).leadMs).toBe(MAX_LEAD_MS);
    expect(staffingHorizons({ ...sample, meanTalkMs: 5 * HOUR }).handleMs).toBe(MAX_HANDLE_MS);
    expect(staffingHorizons({ ...sample, meanTalkMs: -5 }).handleMs).toBe(30_000);
  });
});

describe('linesToDial with the plan', () => {
  const base = { mode: 'predictive' as const, availableAgents: 10, ringing: 0, ratio: 2, overDialAllowed: true, capacity: Infinity };

  it('changes nothing without a plan or with an empty one', () => {
    expect(linesToDial(base)).toBe(20);
    expect(linesToDial({ ...base, plan: { leaving: 0, arriving: 0 } })).toBe(20);
  });

  it('leaves out the seats leaving, in every agent mode', () => {
    expect(linesToDial({ ...base, plan: { leaving: 3, arriving: 0 } })).toBe(14);
    expect(linesToDial({ ...base, mode: 'progressive', plan: { leaving: 3, arriving: 0 } })).toBe(7);
    expect(linesToDial({ ...base, overDialAllowed: false, plan: { leaving: 3, arriving: 0 } })).toBe(7);
  });

  it('dials nothing when every seat is leaving, whoever is arriving', () => {
    expect(linesToDial({ ...base, plan: { leaving: 10, arriving: 0 } })).toBe(0);
    expect(linesToDial({ ...base, plan: { leaving: 12, arriving: 5 } })).toBe(0);
  });

  it('dials ahead for arriving agents only when predictive may over-dial', () => {
    expect(linesToDial({ ...base, plan: { leaving: 0, arriving: 4 } })).toBe(28);
    expect(linesToDial({ ...base, overDialAllowed: false, plan: { leaving: 0, arriving: 4 } })).toBe(10);
    expect(linesToDial({ ...base, mode: 'progressive', plan: { leaving: 0, arriving: 4 } })).toBe(10);
    expect(linesToDial({ ...base, mode: 'none', plan: { leaving: 0, arriving: 4 } })).toBe(0);
  });

  it('never opens an empty floor for arrivals', () => {
    expect(linesToDial({ ...base, availableAgents: 0, plan: { leaving: 0, arriving: 4 } })).toBe(0);
    expect(linesToDial({ ...base, availableAgents: 1, plan: { leaving: 1, arriving: 4 } })).toBe(0);
    expect(linesToDial({ ...base, availableAgents: 1, ratio: 1, plan: { leaving: 0, arriving: 1 } })).toBe(2);
  });

  it('still subtracts the lines ringing and stays under capacity', () => {
    expect(linesToDial({ ...base, ringing: 5, plan: { leaving: 2, arriving: 1 } })).toBe(13);
    expect(linesToDial({ ...base, ringing: 30, plan: { leaving: 0, arriving: 4 } })).toBe(0);
    expect(linesToDial({ ...base, capacity: 6, plan: { leaving: 2, arriving: 1 } })).toBe(6);
  });

  it('applies the ratio to the planned seat count as a whole', () => {
    expect(linesToDial({ ...base, availableAgents: 3, ratio: 1.5, plan: { leaving: 1, arriving: 1 } })).toBe(4);
  });
});

describe('nextPlannedGainAt', () => {
  it('is the earliest arrival entering the lead window or stretch of work ending, after now', () => {
    expect(nextPlannedGainAt(NOW, horizons, [shift('a', HOUR, 9 * HOUR), shift('b', -HOUR, 30 * MINUTE, seated)])).toBe(NOW + 30 * MINUTE);
    expect(nextPlannedGainAt(NOW, horizons, [shift('a', 10 * MINUTE, 9 * HOUR), shift('b', -HOUR, 30 * MINUTE, seated)])).toBe(NOW + 10 * MINUTE - horizons.leadMs);
  });

  it('skips moments already past and reads back-to-back shifts as one stretch', () => {
    expect(nextPlannedGainAt(NOW, horizons, [shift('a', 5 * SECOND, 9 * HOUR)])).toBe(NOW + 9 * HOUR);
    expect(nextPlannedGainAt(NOW, horizons, [shift('a', -HOUR, MINUTE, seated), shift('a', MINUTE, 2 * HOUR, seated)])).toBe(NOW + 2 * HOUR);
  });

  it('is null without shifts', () => {
    expect(nextPlannedGainAt(NOW, horizons, [])).toBeNull();
  });
});
