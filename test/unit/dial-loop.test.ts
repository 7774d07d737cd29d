import { CAMPAIGN_STATES, CAMPAIGN_TYPES, type CampaignState } from '../../src/modules/campaigns/campaign.rules';
import { acceptedStates, LIFECYCLE_VERBS, lifecycleTarget, type LifecycleVerb } from '../../src/modules/campaigns/campaign-lifecycle.rules';
import { toCallSignal } from '../../src/modules/dialer/call-event.relay';
import { tickRowId } from '../../src/modules/dialer/dial-tick.service';
import { DEFAULT_RUNNER_OPTIONS, RunnerOptionsBody } from '../../src/modules/dialer/runner-options';
import type { EslEvent } from '../../src/switch/esl';
import { ABANDON_AFTER_MS, abandonedWaiting, amdEffective, dispositionOf, menuAt, promptAt, resolveKey, treatmentOf, type HangupFacts } from '../../workflows/call-flow';

// ---------------------------------------------------------------------------------------------
// Campaign state machine (SPEC "States and transitions" / Campaign)
// ---------------------------------------------------------------------------------------------

/**
 * The table of the specification, written out independently of the implementation. Where the
 * specification says "not shown" (which states stop accepts; suspended_balance) the entries are the
 * project's documented choice: stop accepts the states where a runner exists or may resume.
 */
const EXPECTED: Record<LifecycleVerb, Record<CampaignState, CampaignState | null>> = {
  start: { draft: 'running', running: 'running', paused: 'running', completed: null, archived: null, suspended_balance: null },
  resume: { draft: 'running', running: 'running', paused: 'running', completed: null, archived: null, suspended_balance: null },
  pause: { draft: null, running: 'paused', paused: null, completed: null, archived: null, suspended_balance: null },
  stop: { draft: null, running: 'completed', paused: 'completed', completed: null, archived: null, suspended_balance: 'completed' },
  archive: { draft: 'archived', running: null, paused: null, completed: 'archived', archived: null, suspended_balance: null },
};

describe('lifecycleTarget', () => {
  it('knows exactly the five verbs and six states of the specification', () => {
    expect([...LIFECYCLE_VERBS].sort()).toEqual(['archive', 'pause', 'resume', 'start', 'stop']);
    expect([...CAMPAIGN_STATES].sort()).toEqual(['archived', 'completed', 'draft', 'paused', 'running', 'suspended_balance']);
  });

  const cases = LIFECYCLE_VERBS.flatMap((verb) => CAMPAIGN_STATES.map((state) => [verb, state, EXPECTED[verb][state]] as const));
  it.each(cases)('%s from %s leads to %s', (verb, state, to) => {
    expect(lifecycleTarget(verb, state)).toBe(to);
  });

  it('refuses every verb from a state it does not know', () => {
    for (const verb of LIFECYCLE_VERBS) {
      for (const state of ['', 'RUNNING', 'deleted', 'draft ', 'suspended']) expect(lifecycleTarget(verb, state)).toBeNull();
    }
  });

  it('keeps completed terminal except for archive, and archived closed to everything', () => {
    expect(LIFECYCLE_VERBS.filter((v) => lifecycleTarget(v, 'completed') !== null)).toEqual(['archive']);
    expect(LIFECYCLE_VERBS.filter((v) => lifecycleTarget(v, 'archived') !== null)).toEqual([]);
  });

  it('makes start on a running campaign the one call that leads to the state it came from', () => {
    const idempotent = LIFECYCLE_VERBS.flatMap((v) => CAMPAIGN_STATES.filter((s) => lifecycleTarget(v, s) === s).map((s) => `${v}:${s}`));
    expect(idempotent.sort()).toEqual(['resume:running', 'start:running']);
  });
});

describe('acceptedStates', () => {
  it.each(LIFECYCLE_VERBS.map((v) => [v]))('%s lists exactly the states the specification accepts', (verb) => {
    const expected = CAMPAIGN_STATES.filter((s) => EXPECTED[verb][s] !== null);
    expect([...acceptedStates(verb)].sort()).toEqual([...expected].sort());
    expect(new Set(acceptedStates(verb)).size).toBe(acceptedStates(verb).length);
  });

  it('agrees with lifecycleTarget for every verb and state', () => {
    for (const verb of LIFECYCLE_VERBS) {
      for (const state of CAMPAIGN_STATES) expect(acceptedStates(verb).includes(state)).toBe(lifecycleTarget(verb, state) !== null);
    }
  });
});

// ---------------------------------------------------------------------------------------------
// Runner options (body of start / resume)
// ---------------------------------------------------------------------------------------------

describe('RunnerOptionsBody', () => {
  const DEFAULTS = {
    tick_ms: 1000,
    batch_size: 50,
    gateway: null,
    agent_domain: null,
    call_ttl_ms: 2 * 3600 * 1000,
    blocked_cooldown_ms: 15 * 60 * 1000,
  };
  const ok = (body: unknown) => RunnerOptionsBody.safeParse(body);
  const accepts = (body: unknown) => {
    const r = ok(body);
    if (!r.success) throw new Error(`refused ${JSON.stringify(body)}: ${r.error.message}`);
    return r.data;
  };
  const refuses = (body: unknown) => {
    const r = ok(body);
    expect({ body, success: r.success }).toEqual({ body, success: false });
    return r.success ? [] : r.error.issues;
  };

  it('fills every default from an empty body', () => {
    expect(accepts({})).toEqual(DEFAULTS);
    expect(DEFAULT_RUNNER_OPTIONS).toEqual(DEFAULTS);
  });

  it('keeps given values and defaults the rest', () => {
    expect(accepts({ tick_ms: 250, gateway: 'carrier-a' })).toEqual({ ...DEFAULTS, tick_ms: 250, gateway: 'carrier-a' });
  });

  it.each([
    ['tick_ms', 100, 60_000],
    ['batch_size', 1, 500],
    ['call_ttl_ms', 1000, 4 * 3600 * 1000],
    ['blocked_cooldown_ms', 0, 7 * 24 * 3600 * 1000],
  ])('%s accepts %d..%d inclusive and nothing outside', (key, min, max) => {
    expect(accepts({ [key]: min })[key as keyof typeof DEFAULTS]).toBe(min);
    expect(accepts({ [key]: max })[key as keyof typeof DEFAULTS]).toBe(max);
    for (const bad of [min - 1, max + 1]) {
      const issues = refuses({ [key]: bad });
      expect(issues[0]!.path).toEqual([key]);
    }
  });

  it.each(['tick_ms', 'batch_size', 'call_ttl_ms', 'blocked_cooldown_ms'])('%s must be an integer number', (key) => {
    for (const bad of ['1000', true, null, [1000], { v: 1000 }, 1000.5, Number.NaN, Infinity]) {
      const issues = refuses({ [key]: bad });
      expect(issues[0]!.path).toEqual([key]);
    }
  });

  it.each(['gateway', 'agent_domain'])('%s accepts null (the switch default) and refuses non-strings', (key) => {
    expect(accepts({ [key]: null })[key as keyof typeof DEFAULTS]).toBeNull();
    for (const bad of [42, true, ['a'], { name: 'a' }]) expect(refuses({ [key]: bad })[0]!.path).toEqual([key]);
  });

  it('accepts a gateway of up to 64 characters in the run input (the switch gateway derived from a carrier id)', () => {
    for (const gw of ['default', 'carrier-a', 'trunk_2', 'sip.provider.example', 'A', 'g'.repeat(64)]) expect(accepts({ gateway: gw }).gateway).toBe(gw);
  });

  it('refuses a gateway longer than a carrier id (the carrier itself is checked when the run starts)', () => {
    expect(refuses({ gateway: 'g'.repeat(65) })[0]!.path).toEqual(['gateway']);
  });

  it('accepts domain names and addresses for agent_domain', () => {
    const longest = `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(61)}`;
    expect(longest).toHaveLength(253);
    for (const d of ['a', 'pbx', 'pbx.example.com', 'PBX-1.Example.org', '10.0.0.5', 'x1.y2', longest]) expect(accepts({ agent_domain: d }).agent_domain).toBe(d);
  });

  it('refuses agent_domain strings that are not domain names', () => {
    const tooLong = `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(62)}`;
    expect(tooLong).toHaveLength(254);
    for (const d of [
      '',
      '-pbx.example.com',
      'pbx.example.com-',
      '.example.com',
      'example.com.',
      'a..b',
      'pbx.-example.com',
      'pbx-.example.com',
      `${'a'.repeat(64)}.com`,
      tooLong,
      'pbx example.com',
      'user@pbx.example.com',
      'pbx.example.com/x',
      'pbx_example.com',
      'pbx.example.com:5060',
    ]) {
      expect(refuses({ agent_domain: d })[0]!.path).toEqual(['agent_domain']);
    }
  });

  it('refuses any key it does not know, ai_disclosure_configured included', () => {
    for (const extra of [{ ai_disclosure_configured: true }, { ai_disclosure_configured: false }, { surprise: 1 }, { TICK_MS: 1000 }, { tickMs: 1000 }]) {
      const issues = refuses(extra);
      expect(issues.some((i) => i.code === 'unrecognized_keys' && (i as { keys: string[] }).keys.includes(Object.keys(extra)[0]!))).toBe(true);
    }
    // A valid option does not carry an unknown key through.
    expect(refuses({ tick_ms: 500, ai_disclosure_configured: true }).map((i) => i.code)).toContain('unrecognized_keys');
  });

  it('refuses a body that is not an object', () => {
    for (const bad of [null, [], 'tick_ms=100', 5, true]) refuses(bad);
  });
});

// ---------------------------------------------------------------------------------------------
// Call treatment and AMD
// ---------------------------------------------------------------------------------------------

describe('treatmentOf', () => {
  const EXPECTED_TREATMENT: Record<(typeof CAMPAIGN_TYPES)[number], string> = {
    predictive: 'agent',
    progressive: 'agent',
    preview: 'agent',
    manual: 'agent',
    tts_blast: 'message',
    tts_ivr: 'menu',
    ivr_cascade: 'menu',
    survey: 'menu',
    ai_voice: 'ai',
    sms_blast: 'none',
  };

  it('covers every campaign type', () => {
    expect(Object.keys(EXPECTED_TREATMENT).sort()).toEqual([...CAMPAIGN_TYPES].sort());
  });

  it.each(CAMPAIGN_TYPES.map((t) => [t, EXPECTED_TREATMENT[t]]))('%s answers with %s', (type, treatment) => {
    expect(treatmentOf(type)).toBe(treatment);
  });

  it('gives nothing to an unknown type', () => {
    for (const t of ['', 'PREDICTIVE', 'robocall']) expect(treatmentOf(t)).toBe('none');
  });
});

describe('amdEffective', () => {
  const PROFILE_ON = new Set(['predictive', 'progressive', 'tts_blast']);
  const cases = CAMPAIGN_TYPES.flatMap((t) => [
    [t, true, true],
    [t, false, false],
    [t, null, PROFILE_ON.has(t)],
  ] as const);

  it.each(cases)('%s with amd_enabled %p runs AMD: %p', (type, amd, expected) => {
    expect(amdEffective(type, amd)).toBe(expected);
  });

  it('inherits "off" for an unknown type', () => {
    expect(amdEffective('robocall', null)).toBe(false);
    expect(amdEffective('robocall', true)).toBe(true);
  });
});

// ---------------------------------------------------------------------------------------------
// Key menus
// ---------------------------------------------------------------------------------------------

describe('key menus', () => {
  const flat = { '1': { action: 'transfer_agent' }, '2': { action: 'hangup' }, '3': { action: 'optout' }, '9': { action: 'transfer_agent' } };
  const deep = { prompt: 'Deep menu', entries: { '#': { action: 'hangup' } } };
  const billing = { prompt: 'Billing menu', entries: { '1': { action: 'transfer_agent' }, '2': { submenu: deep }, '*': { submenu: { entries: { '0': { action: 'hangup' } } } } } };
  const nested = {
    prompt: 'Main menu',
    entries: { '1': { submenu: billing }, '3': { action: 'hangup' }, '8': { action: 'optout' }, '9': { action: 'transfer_agent' }, '5': { action: 'dance' }, '6': 'transfer_agent' },
  };
  const flatWithSub = { '1': { submenu: { prompt: 'Sub of flat', entries: { '2': { action: 'hangup' } } } }, '2': { submenu: { '4': { action: 'transfer_agent' } } } };

  describe('menuAt', () => {
    it('is the root itself at the empty path', () => {
      expect(menuAt(flat, '')).toBe(flat);
      expect(menuAt(nested, '')).toBe(nested);
      expect(menuAt({}, '')).toEqual({});
    });

    it('follows submenu keys', () => {
      expect(menuAt(nested, '1')).toBe(billing);
      expect(menuAt(nested, '12')).toBe(deep);
      expect(menuAt(flatWithSub, '1')).toBe(flatWithSub['1'].submenu);
      expect(menuAt(flatWithSub, '2')).toBe(flatWithSub['2'].submenu);
    });

    it('is null where the path leads nowhere', () => {
      expect(menuAt(nested, '3')).toBeNull(); // an action, not a submenu
      expect(menuAt(nested, '7')).toBeNull(); // no such key
      expect(menuAt(nested, '121')).toBeNull(); // past the deepest menu
      expect(menuAt(nested, '6')).toBeNull(); // not an object
      expect(menuAt(flat, '1')).toBeNull();
      expect(menuAt({}, '1')).toBeNull();
    });
  });

  describe('promptAt', () => {
    it("reads a node's own prompt", () => {
      expect(promptAt(nested, '', 'tts script')).toBe('Main menu');
      expect(promptAt(nested, '1', 'tts script')).toBe('Billing menu');
      expect(promptAt(nested, '12', null)).toBe('Deep menu');
      expect(promptAt(flatWithSub, '1', 'tts script')).toBe('Sub of flat');
    });

    it("falls back to the campaign's tts_prompt only at the root of a flat map", () => {
      expect(promptAt(flat, '', 'tts script')).toBe('tts script');
      expect(promptAt(flat, '', null)).toBeNull();
      expect(promptAt({}, '', 'tts script')).toBe('tts script');
      expect(promptAt(nested, '1*', 'tts script')).toBeNull(); // a submenu without a prompt
      expect(promptAt(flatWithSub, '2', 'tts script')).toBeNull();
    });

    it('is null on a path that leads nowhere', () => {
      expect(promptAt(nested, '7', 'tts script')).toBeNull();
      expect(promptAt(flat, '1', 'tts script')).toBeNull();
    });
  });

  describe('resolveKey', () => {
    it('maps flat entries to their action', () => {
      expect(resolveKey(flat, '', '1', null)).toEqual({ kind: 'action', action: 'transfer_agent' });
      expect(resolveKey(flat, '', '2', null)).toEqual({ kind: 'action', action: 'hangup' });
      expect(resolveKey(flat, '', '3', null)).toEqual({ kind: 'optout' });
    });

    it("lets the campaign's opt-out digit win over a menu entry, at any depth", () => {
      expect(resolveKey(flat, '', '9', '9')).toEqual({ kind: 'optout' });
      expect(resolveKey(nested, '', '1', '1')).toEqual({ kind: 'optout' });
      expect(resolveKey(nested, '1', '1', '1')).toEqual({ kind: 'optout' });
      expect(resolveKey(nested, '12', '#', '#')).toEqual({ kind: 'optout' });
      // ... even where the path leads nowhere and the menu is empty.
      expect(resolveKey(nested, '7', '*', '*')).toEqual({ kind: 'optout' });
      expect(resolveKey({}, '', '0', '0')).toEqual({ kind: 'optout' });
      // Another digit is still the menu's.
      expect(resolveKey(flat, '', '1', '9')).toEqual({ kind: 'action', action: 'transfer_agent' });
    });

    it('treats the optout action like the opt-out digit', () => {
      expect(resolveKey(nested, '', '8', null)).toEqual({ kind: 'optout' });
      expect(resolveKey(nested, '', '8', '0')).toEqual({ kind: 'optout' });
    });

    it('enters a submenu with its path and prompt', () => {
      expect(resolveKey(nested, '', '1', null)).toEqual({ kind: 'submenu', path: '1', prompt: 'Billing menu' });
      expect(resolveKey(nested, '1', '2', null)).toEqual({ kind: 'submenu', path: '12', prompt: 'Deep menu' });
      expect(resolveKey(nested, '1', '*', null)).toEqual({ kind: 'submenu', path: '1*', prompt: '' });
      expect(resolveKey(flatWithSub, '', '1', null)).toEqual({ kind: 'submenu', path: '1', prompt: 'Sub of flat' });
    });

    it('resolves keys inside a submenu against that submenu only', () => {
      expect(resolveKey(nested, '1', '1', null)).toEqual({ kind: 'action', action: 'transfer_agent' });
      expect(resolveKey(nested, '12', '#', null)).toEqual({ kind: 'action', action: 'hangup' });
      expect(resolveKey(nested, '1*', '0', null)).toEqual({ kind: 'action', action: 'hangup' });
      expect(resolveKey(flatWithSub, '2', '4', null)).toEqual({ kind: 'action', action: 'transfer_agent' });
      expect(resolveKey(nested, '1', '3', null)).toEqual({ kind: 'none' }); // 3 is a root entry only
      expect(resolveKey(nested, '12', '1', null)).toEqual({ kind: 'none' });
    });

    it('does nothing for an unknown key, an unknown action or a malformed entry', () => {
      expect(resolveKey(flat, '', '7', null)).toEqual({ kind: 'none' });
      expect(resolveKey(nested, '', '5', null)).toEqual({ kind: 'none' });
      expect(resolveKey(nested, '', '6', null)).toEqual({ kind: 'none' });
      expect(resolveKey(nested, '', 'prompt', null)).toEqual({ kind: 'none' });
      expect(resolveKey(nested, '7', '1', null)).toEqual({ kind: 'none' });
    });

    it('does nothing in an empty menu', () => {
      for (const d of ['0', '1', '9', '*', '#']) expect(resolveKey({}, '', d, null)).toEqual({ kind: 'none' });
    });

    it('treats an empty or null opt-out digit as none configured', () => {
      expect(resolveKey(flat, '', '1', '')).toEqual({ kind: 'action', action: 'transfer_agent' });
      expect(resolveKey(flat, '', '7', '')).toEqual({ kind: 'none' });
      expect(resolveKey({}, '', '', '')).toEqual({ kind: 'none' });
      expect(resolveKey(flat, '', '1', null)).toEqual({ kind: 'action', action: 'transfer_agent' });
      expect(resolveKey({}, '', '5', null)).toEqual({ kind: 'none' });
    });
  });
});

// ---------------------------------------------------------------------------------------------
// Disposition of a finished call
// ---------------------------------------------------------------------------------------------

describe('dispositionOf', () => {
  const base: HangupFacts = { hangupCause: 'NORMAL_CLEARING', answered: true, amdVerdict: null, abandoned: false };

  it('answered: abandoned, unless a machine took the call (abandonment counts people only)', () => {
    expect(dispositionOf({ ...base, abandoned: true })).toBe('abandoned');
    expect(dispositionOf({ ...base, abandoned: true, amdVerdict: 'MACHINE' })).toBe('machine');
  });

  it('answered by a machine', () => {
    expect(dispositionOf({ ...base, amdVerdict: 'MACHINE' })).toBe('machine');
    expect(dispositionOf({ ...base, amdVerdict: 'MACHINE', hangupCause: 'USER_BUSY' })).toBe('machine');
  });

  it('answered by a person, or with no or another verdict', () => {
    for (const amdVerdict of [null, 'HUMAN', 'NOTSURE', '']) expect(dispositionOf({ ...base, amdVerdict })).toBe('answered_human');
    // The cause does not matter once answered.
    expect(dispositionOf({ ...base, hangupCause: 'NO_ANSWER' })).toBe('answered_human');
  });

  it.each([
    ['USER_BUSY', 'busy'],
    ['NO_ANSWER', 'no_answer'],
    ['NO_USER_RESPONSE', 'no_answer'],
    ['ALLOTTED_TIMEOUT', 'no_answer'],
    ['ORIGINATOR_CANCEL', 'canceled'],
    ['CALL_REJECTED', 'rejected'],
    ['NORMAL_CLEARING', 'failed'],
    ['UNALLOCATED_NUMBER', 'failed'],
    ['NORMAL_TEMPORARY_FAILURE', 'failed'],
    ['', 'failed'],
    ['user_busy', 'failed'],
  ])('unanswered with cause %p is %s', (hangupCause, disposition) => {
    expect(dispositionOf({ hangupCause, answered: false, amdVerdict: null, abandoned: false })).toBe(disposition);
    // An AMD verdict or an abandon flag of an unanswered call changes nothing.
    expect(dispositionOf({ hangupCause, answered: false, amdVerdict: 'MACHINE', abandoned: true })).toBe(disposition);
  });
});

describe('abandonedWaiting', () => {
  const answer = Date.parse('2026-11-28T15:00:00.000Z');
  const at = (ms: number) => new Date(answer + ms).toISOString();

  it('is the window of 47 CFR 64.1200(a)(7): two seconds', () => {
    expect(ABANDON_AFTER_MS).toBe(2000);
  });

  it('a consumer who hangs up once the window closed with no agent was abandoned, however late the product noticed', () => {
    expect(abandonedWaiting({ waitingSince: answer, agentId: null, hangupAt: at(2000) })).toBe(true);
    expect(abandonedWaiting({ waitingSince: answer, agentId: null, hangupAt: at(2500) })).toBe(true);
    expect(abandonedWaiting({ waitingSince: answer, agentId: null, hangupAt: at(60_000) })).toBe(true);
  });

  it('a consumer who hangs up within the two seconds was not kept waiting past them', () => {
    expect(abandonedWaiting({ waitingSince: answer, agentId: null, hangupAt: at(1999) })).toBe(false);
    expect(abandonedWaiting({ waitingSince: answer, agentId: null, hangupAt: at(0) })).toBe(false);
  });

  it('a call with an agent on it, or that never waited for one, is not', () => {
    expect(abandonedWaiting({ waitingSince: answer, agentId: 'agent-1', hangupAt: at(5000) })).toBe(false);
    expect(abandonedWaiting({ waitingSince: null, agentId: null, hangupAt: at(5000) })).toBe(false);
  });

  it('a menu caller waits from the key press, not from the answer', () => {
    const pressed = answer + 30_000;
    expect(abandonedWaiting({ waitingSince: pressed, agentId: null, hangupAt: at(31_000) })).toBe(false);
    expect(abandonedWaiting({ waitingSince: pressed, agentId: null, hangupAt: at(32_000) })).toBe(true);
  });
});

// ---------------------------------------------------------------------------------------------
// Attempt row ids of a tick
// ---------------------------------------------------------------------------------------------

describe('tickRowId', () => {
  // RFC 4122 layout (8-4-4-4-12 lowercase hex, variant bits 10xx); the version nibble is 8, the
  // custom/name-based version of RFC 9562. PostgreSQL's uuid type accepts this text as is.
  const RFC4122_SHAPE = /^[0-9a-f]{8}-[0-9a-f]{4}-[1-8][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

  it('is deterministic', () => {
    expect(tickRowId('run-1:0', 0)).toBe(tickRowId('run-1:0', 0));
    expect(tickRowId('5f0c6a7e-run:42', 17)).toBe(tickRowId('5f0c6a7e-run:42', 17));
  });

  it('is a uuid string of the RFC 4122 shape, version 8', () => {
    for (let i = 0; i < 200; i += 1) {
      const id = tickRowId(`run-${i % 7}:${i}`, i);
      expect(id).toMatch(RFC4122_SHAPE);
      expect(id[14]).toBe('8');
      expect(id).toHaveLength(36);
    }
  });

  it('is distinct per index and per tick key', () => {
    const ids = new Set<string>();
    for (const key of ['run-a:0', 'run-a:1', 'run-b:0', 'run-a:10', 'run-a:1#0']) {
      for (let i = 0; i < 500; i += 1) ids.add(tickRowId(key, i));
    }
    expect(ids.size).toBe(5 * 500);
  });

  it('does not collide where key and index could be concatenated ambiguously', () => {
    expect(tickRowId('run:1', 11)).not.toBe(tickRowId('run:11', 1));
    expect(tickRowId('', 0)).not.toBe(tickRowId('0', 0));
  });
});

// ---------------------------------------------------------------------------------------------
// Switch events to call-session signals
// ---------------------------------------------------------------------------------------------

describe('toCallSignal', () => {
  /** None of these events carries speech, so nothing is sealed. */
  const plain = (text: string) => text;
  const US = 1_767_225_600_123_456; // 2026-01-01T00:00:00.123456Z in microseconds
  const AT = '2026-01-01T00:00:00.123Z';
  const ev = (name: string, headers: Record<string, string> = {}, variables: Record<string, string> = {}, subclass?: string): EslEvent => ({
    name,
    subclass,
    uuid: 'c0ffee00-0000-4000-8000-000000000001',
    headers: { 'Event-Name': name, 'Event-Sequence': '1001', 'Event-Date-Timestamp': String(US), ...headers },
    variables,
    body: '',
  });

  it('CHANNEL_ANSWER is answered at the event time, with the event sequence as seq', () => {
    expect(toCallSignal(ev('CHANNEL_ANSWER'), plain)).toEqual({ kind: 'answered', seq: '1001', at: AT });
  });

  it('uses Event-Sequence as seq, and name plus timestamp when it is missing', () => {
    expect(toCallSignal(ev('CHANNEL_ANSWER', { 'Event-Sequence': '77' }), plain)!.seq).toBe('77');
    expect(toCallSignal(ev('CHANNEL_ANSWER', { 'Event-Sequence': '' }), plain)!.seq).toBe(`CHANNEL_ANSWER:${US}`);
    const noSeq = ev('DTMF', { 'DTMF-Digit': '5' });
    delete noSeq.headers['Event-Sequence'];
    expect(toCallSignal(noSeq, plain)!.seq).toBe(`DTMF:${US}`);
  });

  it('reads the time from Event-Date-Timestamp, and uses the clock when it is missing or bad', () => {
    for (const stamp of [undefined, '', 'soon', '0', '-5']) {
      const e = ev('CHANNEL_ANSWER');
      if (stamp === undefined) delete e.headers['Event-Date-Timestamp'];
      else e.headers['Event-Date-Timestamp'] = stamp;
      const before = Date.now();
      const s = toCallSignal(e, plain) as { at: string };
      const at = Date.parse(s.at);
      expect(at).toBeGreaterThanOrEqual(before);
      expect(at).toBeLessThanOrEqual(Date.now());
    }
  });

  it('CUSTOM amd carries the upper-cased AMD-Result, else the amd_result variable', () => {
    expect(toCallSignal(ev('CUSTOM', { 'AMD-Result': 'machine' }, {}, 'amd'), plain)).toEqual({ kind: 'amd', seq: '1001', verdict: 'MACHINE' });
    expect(toCallSignal(ev('CUSTOM', { 'AMD-Result': 'HUMAN' }, { amd_result: 'MACHINE' }, 'amd'), plain)).toEqual({ kind: 'amd', seq: '1001', verdict: 'HUMAN' });
    expect(toCallSignal(ev('CUSTOM', {}, { amd_result: 'notsure' }, 'amd'), plain)).toEqual({ kind: 'amd', seq: '1001', verdict: 'NOTSURE' });
    expect(toCallSignal(ev('CUSTOM', {}, {}, 'amd'), plain)).toEqual({ kind: 'amd', seq: '1001', verdict: '' });
  });

  it('CUSTOM of another subclass, or of none, is not a call signal', () => {
    expect(toCallSignal(ev('CUSTOM', { 'AMD-Result': 'HUMAN' }, {}, 'sofia::register'), plain)).toBeNull();
    expect(toCallSignal(ev('CUSTOM', { 'AMD-Result': 'HUMAN' }, {}, 'AMD'), plain)).toBeNull();
    expect(toCallSignal(ev('CUSTOM', { 'AMD-Result': 'HUMAN' }), plain)).toBeNull();
  });

  it('DTMF carries a valid digit and its time', () => {
    for (const digit of ['0', '5', '9', '*', '#']) {
      expect(toCallSignal(ev('DTMF', { 'DTMF-Digit': digit }), plain)).toEqual({ kind: 'dtmf', seq: '1001', digit, at: AT });
    }
  });

  it('DTMF with no digit, several or a non-DTMF character is dropped', () => {
    for (const digit of ['', '12', 'A', 'a', ' ', '5 ', '+']) expect(toCallSignal(ev('DTMF', { 'DTMF-Digit': digit }), plain)).toBeNull();
    expect(toCallSignal(ev('DTMF'), plain)).toBeNull();
  });

  it('CHANNEL_EXECUTE_COMPLETE is playback_done for speak and playback only', () => {
    expect(toCallSignal(ev('CHANNEL_EXECUTE_COMPLETE', { Application: 'playback' }), plain)).toEqual({ kind: 'playback_done', seq: '1001' });
    expect(toCallSignal(ev('CHANNEL_EXECUTE_COMPLETE', { Application: 'speak' }), plain)).toEqual({ kind: 'playback_done', seq: '1001' });
    for (const app of ['park', 'bridge', 'Playback', '']) expect(toCallSignal(ev('CHANNEL_EXECUTE_COMPLETE', { Application: app }), plain)).toBeNull();
    expect(toCallSignal(ev('CHANNEL_EXECUTE_COMPLETE'), plain)).toBeNull();
  });

  it('CHANNEL_HANGUP_COMPLETE of an answered call carries cause, SIP code and answer time', () => {
    const s = toCallSignal(ev('CHANNEL_HANGUP_COMPLETE', { 'Hangup-Cause': 'NORMAL_CLEARING' }, { sip_term_status: '200', answer_epoch: '1767225590' }), plain);
    expect(s).toEqual({ kind: 'hangup', seq: '1001', at: AT, cause: 'NORMAL_CLEARING', sipCode: 200, answeredAt: '2025-12-31T23:59:50.000Z' });
  });

  it('CHANNEL_HANGUP_COMPLETE of an unanswered call: answer_epoch 0 is no answer', () => {
    const s = toCallSignal(ev('CHANNEL_HANGUP_COMPLETE', { 'Hangup-Cause': 'USER_BUSY' }, { sip_term_status: '486', answer_epoch: '0' }), plain);
    expect(s).toEqual({ kind: 'hangup', seq: '1001', at: AT, cause: 'USER_BUSY', sipCode: 486, answeredAt: null });
    expect((toCallSignal(ev('CHANNEL_HANGUP_COMPLETE', { 'Hangup-Cause': 'NO_ANSWER' }), plain) as { answeredAt: unknown }).answeredAt).toBeNull();
  });

  it('CHANNEL_HANGUP_COMPLETE without a usable SIP status has sipCode null', () => {
    for (const sip of [undefined, '', '0', 'abc', '486.5', '-1']) {
      const vars: Record<string, string> = sip === undefined ? {} : { sip_term_status: sip };
      expect((toCallSignal(ev('CHANNEL_HANGUP_COMPLETE', { 'Hangup-Cause': 'NORMAL_CLEARING' }, vars), plain) as { sipCode: unknown }).sipCode).toBeNull();
    }
  });

  it('CHANNEL_HANGUP_COMPLETE takes the cause from the header, else the variable, else NORMAL_CLEARING', () => {
    const cause = (headers: Record<string, string>, vars: Record<string, string>) => (toCallSignal(ev('CHANNEL_HANGUP_COMPLETE', headers, vars), plain) as { cause: string }).cause;
    expect(cause({ 'Hangup-Cause': 'CALL_REJECTED' }, { hangup_cause: 'USER_BUSY' })).toBe('CALL_REJECTED');
    expect(cause({}, { hangup_cause: 'USER_BUSY' })).toBe('USER_BUSY');
    expect(cause({ 'Hangup-Cause': '' }, { hangup_cause: 'NO_ANSWER' })).toBe('NO_ANSWER');
    expect(cause({}, {})).toBe('NORMAL_CLEARING');
  });

  it('any other event is not a call signal', () => {
    for (const name of ['CHANNEL_CREATE', 'CHANNEL_PROGRESS', 'CHANNEL_HANGUP', 'CHANNEL_EXECUTE', 'BACKGROUND_JOB', 'HEARTBEAT', 'channel_answer', '']) {
      expect(toCallSignal(ev(name, { Application: 'playback', 'DTMF-Digit': '1', 'AMD-Result': 'HUMAN' }, {}, 'amd'), plain)).toBeNull();
    }
  });
});
