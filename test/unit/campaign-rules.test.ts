import { AppError } from '../../src/lib/errors';
import {
  applyCampaignWrite,
  channelOf,
  CAMPAIGN_TYPES,
  consultConfigProblem,
  decimalProblem,
  hasStopNotice,
  IVR_MAX_NODES,
  ivrMenuProblem,
  NEW_CAMPAIGN,
  parseOptoutDigit,
  parseTtsPrompt,
  smsBodyProblem,
  type CampaignSettings,
  type CampaignWrite,
} from '../../src/modules/campaigns/campaign.rules';

// ---------------------------------------------------------------------------------------------
// IVR tree builders

type Menu = Record<string, unknown>;
const action = (name = 'hangup') => ({ action: name });
const nested = (entries: Menu, prompt = 'Press a key') => ({ prompt, entries });

/** A chain of nested menus `depth` deep (the top one is depth 1), ending in one action. */
function chain(depth: number): Menu {
  let menu: Menu = nested({ '1': action() });
  for (let d = depth - 1; d >= 1; d--) menu = nested({ '1': { submenu: menu }, '0': action('transfer_agent') });
  return menu;
}

/** A nested tree of exactly `nodes` nodes (menus plus actions): a root with 5 submenus of actions. */
function treeOf(nodes: number): Menu {
  let actions = nodes - 6;
  if (actions < 5 || actions > 60) throw new Error('treeOf: 11 to 66 nodes');
  const entries: Menu = {};
  for (let s = 1; s <= 5; s++) {
    const count = Math.min(12, actions - (5 - s)); // leave at least one action per remaining submenu
    const keys = ['0', '1', '2', '3', '4', '5', '6', '7', '8', '9', '*', '#'].slice(0, count);
    actions -= count;
    entries[String(s)] = { submenu: nested(Object.fromEntries(keys.map((k) => [k, action()]))) };
  }
  return nested(entries);
}

/** Counts nodes the way the rule does, so the builder is checked independently of the validator. */
function countNodes(menu: Menu): number {
  const entries = ('entries' in menu ? menu.entries : menu) as Record<string, { action?: string; submenu?: Menu }>;
  let n = 1;
  for (const entry of Object.values(entries)) n += entry.submenu ? countNodes(entry.submenu) : 1;
  return n;
}

describe('ivrMenuProblem', () => {
  it('accepts {} (no menu)', () => {
    expect(ivrMenuProblem({})).toBeNull();
  });

  it.each([
    ['flat, one key', { '1': action('transfer_agent') }],
    ['flat, every DTMF key', Object.fromEntries(['0', '1', '2', '3', '4', '5', '6', '7', '8', '9', '*', '#'].map((k) => [k, action()]))],
    ['flat, every action', { '1': action('transfer_agent'), '9': action('optout'), '#': action('hangup') }],
    ['nested', nested({ '1': action('transfer_agent'), '2': action('optout') })],
    ['flat top with a nested submenu', { '1': { submenu: nested({ '1': action() }) }, '2': action('optout') }],
    ['nested two levels', nested({ '1': { submenu: nested({ '*': action('transfer_agent') }, 'Sub') } })],
    ['a prompt of 2000 characters', nested({ '1': action() }, 'p'.repeat(2000))],
  ])('accepts %s', (_label, menu) => {
    expect(ivrMenuProblem(menu)).toBeNull();
  });

  it('allows depth 5 and refuses depth 6', () => {
    expect(ivrMenuProblem(chain(5))).toBeNull();
    expect(ivrMenuProblem(chain(6))).toMatch(/deeper than 5/);
    expect(ivrMenuProblem(chain(9))).toMatch(/deeper than 5/);
  });

  it('counts depth from a flat top menu too', () => {
    expect(ivrMenuProblem({ '1': { submenu: chain(4) } })).toBeNull();
    expect(ivrMenuProblem({ '1': { submenu: chain(5) } })).toMatch(/deeper than 5/);
  });

  it('allows 64 nodes and refuses 65', () => {
    expect(countNodes(treeOf(64))).toBe(64);
    expect(countNodes(treeOf(65))).toBe(65);
    expect(IVR_MAX_NODES).toBe(64);
    expect(ivrMenuProblem(treeOf(64))).toBeNull();
    expect(ivrMenuProblem(treeOf(65))).toMatch(/more than 64 nodes/);
    expect(ivrMenuProblem(treeOf(66))).toMatch(/more than 64 nodes/);
  });

  it.each([
    ['two-character key', { '12': action() }, /'12' is not a single DTMF key/],
    ['letter key', { A: action() }, /'A' is not a single DTMF key/],
    ['plus key', { '+': action() }, /'\+' is not a single DTMF key/],
    ['empty key', { '': action() }, /'' is not a single DTMF key/],
    ['bad key in a submenu', nested({ '1': { submenu: nested({ x: action() }) } }), /ivr_menu\.entries\.1\.submenu\.entries: 'x'/],
    ['unknown action', { '1': action('voicemail') }, /action must be one of transfer_agent, optout, hangup/],
    ['action not a string', { '1': { action: 1 } }, /action must be one of/],
    ['action null', { '1': { action: null } }, /action must be one of/],
    ['entry a bare string', { '1': 'hangup' }, /must be \{"action": \.\.\.\} or \{"submenu": \.\.\.\}/],
    ['entry an array', { '1': [action()] }, /must be \{"action"/],
    ['entry empty', { '1': {} }, /exactly one of action or submenu \(got nothing\)/],
    ['entry with both', { '1': { action: 'hangup', submenu: nested({ '1': action() }) } }, /exactly one of action or submenu/],
    ['entry with an extra key', { '1': { action: 'hangup', label: 'x' } }, /exactly one of action or submenu/],
    ['entry with another key only', { '1': { goto: 'x' } }, /exactly one of action or submenu \(got 'goto'\)/],
    ['submenu not an object', { '1': { submenu: 'menu' } }, /submenu must be an object/],
    ['submenu without a prompt (flat)', { '1': { submenu: { '1': action() } } }, /unknown key '1'/],
    ['submenu without entries', { '1': { submenu: { prompt: 'x' } } }, /entries must be an object/],
    ['empty prompt', nested({ '1': action() }, ''), /prompt must be a non-empty string/],
    ['blank prompt', nested({ '1': action() }, '   '), /prompt must be a non-empty string/],
    ['prompt not a string', { prompt: 7, entries: { '1': action() } }, /prompt must be a non-empty string/],
    ['prompt missing', { entries: { '1': action() } }, /prompt must be a non-empty string/],
    ['prompt over 2000 characters', nested({ '1': action() }, 'p'.repeat(2001)), /at most 2000 characters/],
    ['empty prompt in a submenu', nested({ '1': { submenu: nested({ '1': action() }, '') } }), /submenu\.prompt must be a non-empty string/],
    ['entries empty', nested({}), /must map at least one key/],
    ['entries an array', { prompt: 'x', entries: [action()] }, /entries must be an object/],
    ['entries missing', { prompt: 'x' }, /entries must be an object/],
    ['unknown key beside prompt', { prompt: 'x', entries: { '1': action() }, timeout: 5 }, /unknown key 'timeout'/],
    ['flat key mixed with prompt', { prompt: 'x', entries: { '1': action() }, '2': action() }, /unknown key '2'/],
  ])('refuses %s', (_label, menu, message) => {
    expect(ivrMenuProblem(menu)).toMatch(message);
  });

  it.each([
    ['null', null],
    ['an array', [action()]],
    ['a string', 'menu'],
  ])('refuses a menu that is %s', (_label, menu) => {
    expect(ivrMenuProblem(menu)).toMatch(/must be an object/);
  });
});

// ---------------------------------------------------------------------------------------------

describe('consultConfigProblem', () => {
  it.each([
    ['{} (disabled)', {}],
    ['factor only', { factor: 'dob' }],
    ...['account_last4', 'ssn_last4', 'dob', 'pin', 'zip'].map((f) => [`factor ${f}`, { factor: f }] as [string, object]),
    ['max_attempts 1', { factor: 'pin', max_attempts: 1 }],
    ['max_attempts 10', { factor: 'pin', max_attempts: 10 }],
    ['expose empty', { factor: 'zip', expose: [] }],
    ['expose all', { factor: 'zip', expose: ['balance', 'account_status', 'minimum_payment', 'due_date', 'last4_account'] }],
    ['factor_opts empty', { factor: 'pin', factor_opts: {} }],
    ['factor_opts length', { factor: 'pin', factor_opts: { length: 4 } }],
    ['factor_opts dob_format mmdd', { factor: 'dob', factor_opts: { dob_format: 'mmdd' } }],
    ['factor_opts dob_format mmddyyyy', { factor: 'dob', factor_opts: { dob_format: 'mmddyyyy', length: 8 } }],
    ['every key', { factor: 'dob', max_attempts: 3, expose: ['balance', 'due_date'], factor_opts: { length: 8, dob_format: 'mmddyyyy' } }],
  ])('accepts %s', (_label, config) => {
    expect(consultConfigProblem(config)).toBeNull();
  });

  it.each([
    ['an unknown top-level key', { factor: 'dob', retries: 2 }, /unknown key 'retries'/],
    ['an unknown key without factor', { enabled: true }, /unknown key 'enabled'/],
    ['factor missing', { max_attempts: 3 }, /factor is required/],
    ['factor unknown', { factor: 'mothers_maiden_name' }, /factor must be one of account_last4, ssn_last4, dob, pin, zip/],
    ['factor null', { factor: null }, /factor must be one of/],
    ['factor not a string', { factor: 4 }, /factor must be one of/],
    ['factor wrong case', { factor: 'DOB' }, /factor must be one of/],
    ['max_attempts 0', { factor: 'pin', max_attempts: 0 }, /max_attempts must be an integer from 1 to 10/],
    ['max_attempts 11', { factor: 'pin', max_attempts: 11 }, /max_attempts/],
    ['max_attempts -1', { factor: 'pin', max_attempts: -1 }, /max_attempts/],
    ['max_attempts 2.5', { factor: 'pin', max_attempts: 2.5 }, /max_attempts/],
    ['max_attempts a string', { factor: 'pin', max_attempts: '3' }, /max_attempts/],
    ['max_attempts null', { factor: 'pin', max_attempts: null }, /max_attempts/],
    ['expose not an array', { factor: 'pin', expose: 'balance' }, /expose must be an array/],
    ['expose unknown value', { factor: 'pin', expose: ['balance', 'ssn'] }, /expose may hold only/],
    ['expose non-string', { factor: 'pin', expose: [1] }, /expose may hold only/],
    ['expose duplicate', { factor: 'pin', expose: ['balance', 'balance'] }, /lists 'balance' twice/],
    ['expose null', { factor: 'pin', expose: null }, /expose must be an array/],
    ['factor_opts not an object', { factor: 'pin', factor_opts: 4 }, /factor_opts must be an object/],
    ['factor_opts an array', { factor: 'pin', factor_opts: [] }, /factor_opts must be an object/],
    ['factor_opts null', { factor: 'pin', factor_opts: null }, /factor_opts must be an object/],
    ['factor_opts unknown key', { factor: 'pin', factor_opts: { digits: 4 } }, /factor_opts: unknown key 'digits'/],
    ['factor_opts.length 0', { factor: 'pin', factor_opts: { length: 0 } }, /length must be a positive integer/],
    ['factor_opts.length negative', { factor: 'pin', factor_opts: { length: -4 } }, /length must be a positive integer/],
    ['factor_opts.length fractional', { factor: 'pin', factor_opts: { length: 4.5 } }, /length must be a positive integer/],
    ['factor_opts.length a string', { factor: 'pin', factor_opts: { length: '4' } }, /length must be a positive integer/],
    ['factor_opts.dob_format unknown', { factor: 'dob', factor_opts: { dob_format: 'ddmmyyyy' } }, /dob_format must be one of mmdd, mmddyyyy/],
    ['factor_opts.dob_format null', { factor: 'dob', factor_opts: { dob_format: null } }, /dob_format must be one of/],
  ])('refuses %s', (_label, config, message) => {
    expect(consultConfigProblem(config)).toMatch(message);
  });

  it.each([null, [], 'dob', 3])('refuses a config that is not an object (%p)', (config) => {
    expect(consultConfigProblem(config)).toMatch(/must be an object/);
  });
});

// ---------------------------------------------------------------------------------------------

describe('parseOptoutDigit', () => {
  it.each(['0', '1', '5', '9', '*', '#'])('accepts %s', (digit) => {
    expect(parseOptoutDigit(digit)).toEqual({ value: digit });
  });

  it('clears on the empty string and on null', () => {
    expect(parseOptoutDigit('')).toEqual({ value: null });
    expect(parseOptoutDigit(null)).toEqual({ value: null });
  });

  it.each([['12'], ['a'], ['A'], [' '], [' 9'], ['9 '], ['+'], ['**'], ['١'], [9], [0], [true], [['9']], [{ digit: '9' }]])('refuses %p', (value) => {
    expect(parseOptoutDigit(value)).toEqual({ problem: expect.stringMatching(/exactly one DTMF key/) });
  });
});

describe('parseTtsPrompt', () => {
  it('keeps a prompt up to 2000 characters, counted as code points', () => {
    expect(parseTtsPrompt('Hello')).toEqual({ value: 'Hello' });
    expect(parseTtsPrompt('x'.repeat(2000))).toEqual({ value: 'x'.repeat(2000) });
    // 2000 astral characters are 4000 UTF-16 units but 2000 characters.
    expect(parseTtsPrompt('😀'.repeat(2000))).toEqual({ value: '😀'.repeat(2000) });
  });

  it('refuses more than 2000 characters', () => {
    expect(parseTtsPrompt('x'.repeat(2001))).toEqual({ problem: expect.stringMatching(/at most 2000 characters/) });
    expect(parseTtsPrompt('😀'.repeat(2001))).toEqual({ problem: expect.stringMatching(/at most 2000/) });
  });

  it('clears on empty, whitespace-only and null', () => {
    expect(parseTtsPrompt('')).toEqual({ value: null });
    expect(parseTtsPrompt('   ')).toEqual({ value: null });
    expect(parseTtsPrompt(null)).toEqual({ value: null });
  });
});

// ---------------------------------------------------------------------------------------------

describe('SMS body', () => {
  it.each([
    'Acme: you have a balance. Reply STOP to opt out.',
    'Reply STOP to unsubscribe',
    'reply stop',
    'Text STOP to 12345 to end messages',
    'Txt STOP to quit',
    'Send STOP to cancel',
    'Reply "STOP" to opt out',
    'Reply with STOP to stop receiving texts',
    'Reply: STOP',
    'STOP to opt out',
    'STOP to opt-out',
    'Stop to unsubscribe',
    'Msg from Acme. STOP to end.',
    'Responde ALTO para cancelar',
    'Responda ALTO',
    'Envía ALTO para darse de baja',
    'Envia ALTO',
    'ALTO para no recibir mensajes',
    'Conteste con ALTO',
    'Reply STOP or ALTO',
  ])('accepts the notice in %p', (body) => {
    expect(hasStopNotice(body)).toBe(true);
    expect(smsBodyProblem(body)).toBeNull();
  });

  it.each([
    'Please pay your balance today.',
    'Stop by our office to pay.',
    'Do not stop paying.',
    'STOP',
    'Reply STOPPED',
    'Reply NOSTOP',
    'Call us to opt out.',
    'Reply HELP for help',
    'Alto saldo pendiente.',
    'Unsubscribe at acme.example',
    'Reply STO P',
  ])('refuses a body without the notice: %p', (body) => {
    expect(hasStopNotice(body)).toBe(false);
    expect(smsBodyProblem(body)).toMatch(/must contain the STOP opt-out notice/);
  });

  it('accepts every documented merge variable', () => {
    const body = 'Ref {{debt_ref}} for {{consumer_ref}}, acct {{account_number}}, owes {{amount}} in {{state}}. Reply STOP to opt out.';
    expect(smsBodyProblem(body)).toBeNull();
  });

  it.each([
    ['{{name}}', /unknown merge variable \{\{name\}\}/],
    ['{{ debt_ref }}', /unknown merge variable \{\{ debt_ref \}\}/],
    ['{{DEBT_REF}}', /unknown merge variable/],
    ['{{}}', /unknown merge variable \{\{\}\}/],
    ['{{balance}}', /unknown merge variable \{\{balance\}\}/],
    ['{{debt_ref}', /malformed merge variable/],
    ['{debt_ref}}', /malformed merge variable/],
    ['{{debt_ref', /malformed merge variable/],
  ])('refuses the merge token %p', (token, message) => {
    expect(smsBodyProblem(`Hi ${token}. Reply STOP to opt out.`)).toMatch(message);
  });

  it('leaves single braces alone: {{{debt_ref}}} is the variable inside literal braces', () => {
    expect(smsBodyProblem('Ref {{{debt_ref}}} {x}. Reply STOP to opt out.')).toBeNull();
  });

  it('refuses an empty or blank body and one over 1600 characters', () => {
    expect(smsBodyProblem('')).toMatch(/must not be empty/);
    expect(smsBodyProblem('  ')).toMatch(/must not be empty/);
    const notice = ' Reply STOP to opt out.';
    expect(smsBodyProblem('x'.repeat(1600 - notice.length) + notice)).toBeNull();
    expect(smsBodyProblem('x'.repeat(1601 - notice.length) + notice)).toMatch(/at most 1600 characters/);
  });
});

// ---------------------------------------------------------------------------------------------

describe('decimalProblem', () => {
  const threshold = { min: 0, max: 1, scale: 4 };
  const ratio = { min: 1, max: 100, scale: 3 };

  it.each([
    [0, threshold],
    [0.03, threshold],
    [0.0001, threshold],
    [1, threshold],
    [1, ratio],
    [2.125, ratio],
    [100, ratio],
  ])('accepts %p', (value, bounds) => {
    expect(decimalProblem('f', value, bounds)).toBeNull();
  });

  it.each([
    [-0.01, threshold, /between 0 and 1/],
    [1.0001, threshold, /between 0 and 1/],
    [0.00001, threshold, /at most 4 decimal places/],
    [0.12345, threshold, /at most 4 decimal places/],
    [1e-7, threshold, /at most 4 decimal places/],
    [0.999, ratio, /between 1 and 100/],
    [100.001, ratio, /between 1 and 100/],
    [1.2345, ratio, /at most 3 decimal places/],
    [Number.NaN, ratio, /finite/],
    [Number.POSITIVE_INFINITY, ratio, /finite/],
  ])('refuses %p', (value, bounds, message) => {
    expect(decimalProblem('f', value, bounds)).toMatch(message);
  });
});

// ---------------------------------------------------------------------------------------------

function invalidMessage(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(AppError);
    expect({ status: (err as AppError).status, code: (err as AppError).code }).toEqual({ status: 400, code: 'invalid' });
    return (err as AppError).message;
  }
  throw new Error('expected a 400 invalid');
}

const create = (write: CampaignWrite) => applyCampaignWrite(NEW_CAMPAIGN, { name: 'C', ...write });
const withSettings = (patch: Partial<CampaignSettings>): CampaignSettings => ({ ...NEW_CAMPAIGN, name: 'C', ...patch });

describe('applyCampaignWrite', () => {
  it('gives a new campaign its defaults', () => {
    const { next, changed } = create({});
    expect(next).toEqual({ ...NEW_CAMPAIGN, name: 'C' });
    expect(changed).toEqual(['name']);
  });

  it('derives the channel from the type', () => {
    for (const type of CAMPAIGN_TYPES) expect(channelOf(type)).toBe(type === 'sms_blast' ? 'sms' : 'voice');
  });

  it('trims the name and refuses a blank or over-long one', () => {
    expect(create({ name: '  Spring  ' }).next.name).toBe('Spring');
    expect(invalidMessage(() => create({ name: '   ' }))).toMatch(/name must not be empty/);
    expect(create({ name: 'n'.repeat(200) }).next.name).toHaveLength(200);
    expect(invalidMessage(() => create({ name: 'n'.repeat(201) }))).toMatch(/at most 200/);
  });

  it('refuses a campaign_type outside the vocabulary', () => {
    expect(invalidMessage(() => create({ campaign_type: 'robocall' }))).toMatch(/campaign_type must be one of/);
    expect(invalidMessage(() => create({ campaign_type: 'Predictive' }))).toMatch(/campaign_type/);
  });

  it('requires sms_body for sms_blast, on create and when a patch makes it so', () => {
    expect(invalidMessage(() => create({ campaign_type: 'sms_blast' }))).toMatch(/sms_body is required/);
    expect(create({ campaign_type: 'sms_blast', sms_body: 'Reply STOP to opt out' }).next.sms_body).toBe('Reply STOP to opt out');
    expect(invalidMessage(() => applyCampaignWrite(withSettings({}), { campaign_type: 'sms_blast' }))).toMatch(/sms_body is required/);
    const blast = withSettings({ campaign_type: 'sms_blast', sms_body: 'Reply STOP' });
    expect(invalidMessage(() => applyCampaignWrite(blast, { sms_body: null }))).toMatch(/sms_body is required/);
    // A voice campaign may carry an SMS body, but it must still be a valid one.
    expect(invalidMessage(() => create({ sms_body: 'pay now' }))).toMatch(/STOP opt-out notice/);
  });

  it('renders decimals as strings', () => {
    const { next } = create({ abandonment_threshold: 0.03, min_dial_ratio: 1.5, max_dial_ratio: 3 });
    expect(next).toMatchObject({ abandonment_threshold: '0.03', min_dial_ratio: '1.5', max_dial_ratio: '3' });
  });

  it('checks min_dial_ratio <= max_dial_ratio against the stored other side', () => {
    expect(create({ min_dial_ratio: 2, max_dial_ratio: 2 }).next.min_dial_ratio).toBe('2');
    expect(invalidMessage(() => create({ min_dial_ratio: 2.5, max_dial_ratio: 2 }))).toMatch(/min_dial_ratio must not exceed max_dial_ratio/);
    const stored = withSettings({ min_dial_ratio: '1.5', max_dial_ratio: '3' });
    expect(invalidMessage(() => applyCampaignWrite(stored, { max_dial_ratio: 1.2 }))).toMatch(/must not exceed/);
    expect(invalidMessage(() => applyCampaignWrite(stored, { min_dial_ratio: 3.5 }))).toMatch(/must not exceed/);
    expect(applyCampaignWrite(stored, { max_dial_ratio: null }).next.max_dial_ratio).toBeNull();
  });

  it('checks the calling window: HH:MM:SS, both or neither, start before end', () => {
    expect(create({ calling_window_start: '09:00:00', calling_window_end: '20:30:00' }).next).toMatchObject({
      calling_window_start: '09:00:00',
      calling_window_end: '20:30:00',
    });
    expect(create({ calling_window_start: '00:00:00', calling_window_end: '23:59:59' }).next.calling_window_end).toBe('23:59:59');
    for (const bad of ['9:00:00', '09:00', '24:00:00', '12:60:00', '12:00:60', '0900:00', 'noon', '', '09:00:00Z', '09:00:00.000']) {
      expect(invalidMessage(() => create({ calling_window_start: bad, calling_window_end: '21:00:00' }))).toMatch(/calling_window_start must be a time of day HH:MM:SS/);
    }
    expect(invalidMessage(() => create({ calling_window_start: '09:00:00' }))).toMatch(/both or neither/);
    expect(invalidMessage(() => create({ calling_window_end: '09:00:00' }))).toMatch(/both or neither/);
    expect(invalidMessage(() => create({ calling_window_start: '10:00:00', calling_window_end: '10:00:00' }))).toMatch(/start must be before/);
    expect(invalidMessage(() => create({ calling_window_start: '21:00:00', calling_window_end: '08:00:00' }))).toMatch(/start must be before/);
    const stored = withSettings({ calling_window_start: '09:00:00', calling_window_end: '17:00:00' });
    expect(invalidMessage(() => applyCampaignWrite(stored, { calling_window_start: null }))).toMatch(/both or neither/);
    expect(invalidMessage(() => applyCampaignWrite(stored, { calling_window_end: '08:00:00' }))).toMatch(/before/);
    expect(applyCampaignWrite(stored, { calling_window_start: null, calling_window_end: null }).next.calling_window_start).toBeNull();
  });

  it('checks default_timezone is an IANA zone', () => {
    expect(create({ default_timezone: 'America/Chicago' }).next.default_timezone).toBe('America/Chicago');
    for (const bad of ['Mars/Olympus', 'EST5EDT6', '', 'america/chicago/x']) {
      expect(invalidMessage(() => create({ default_timezone: bad }))).toMatch(/not an IANA time zone/);
    }
  });

  it('normalizes optout_digit and tts_prompt', () => {
    expect(create({ optout_digit: '#' }).next.optout_digit).toBe('#');
    expect(invalidMessage(() => create({ optout_digit: '12' }))).toMatch(/optout_digit/);
    expect(invalidMessage(() => create({ optout_digit: 9 }))).toMatch(/optout_digit/);
    const stored = withSettings({ optout_digit: '9', tts_prompt: 'Hello' });
    expect(applyCampaignWrite(stored, { optout_digit: '', tts_prompt: '' }).next).toMatchObject({ optout_digit: null, tts_prompt: null });
    expect(invalidMessage(() => create({ tts_prompt: 'x'.repeat(2001) }))).toMatch(/tts_prompt/);
  });

  it('checks caller_ids (E.164, distinct) and caller_id_pool (ids, distinct, lowercased)', () => {
    expect(create({ caller_ids: ['+12125550100', '+442071838750'] }).next.caller_ids).toEqual(['+12125550100', '+442071838750']);
    expect(invalidMessage(() => create({ caller_ids: ['2125550100'] }))).toMatch(/caller_ids: '2125550100' is not an E.164 number/);
    expect(invalidMessage(() => create({ caller_ids: ['+12125550100', '+12125550100'] }))).toMatch(/twice/);
    expect(invalidMessage(() => create({ caller_ids: Array.from({ length: 1001 }, (_, i) => `+1212555${String(i).padStart(4, '0')}`) }))).toMatch(/at most 1000/);
    const id = 'A1B2C3D4-0000-4000-8000-000000000001';
    expect(create({ caller_id_pool: [id] }).next.caller_id_pool).toEqual([id.toLowerCase()]);
    expect(invalidMessage(() => create({ caller_id_pool: ['not-a-uuid'] }))).toMatch(/caller_id_pool: 'not-a-uuid' is not a DID id/);
    expect(invalidMessage(() => create({ caller_id_pool: [id, id.toLowerCase()] }))).toMatch(/twice/);
  });

  it('takes a carrier id (stored trimmed, lower case), refuses anything else, clears with null', () => {
    const id = 'A1B2C3D4-0000-4000-8000-0000000000C1';
    expect(create({ carrier: ` ${id} ` }).next.carrier).toBe(id.toLowerCase());
    for (const carrier of [' ', 'trunk-a', `carrier-${id.toLowerCase()}`, `${id}x`]) {
      expect(invalidMessage(() => create({ carrier }))).toMatch(/^carrier must be the id of one of the tenant's active carriers/);
    }
    expect(applyCampaignWrite(withSettings({ carrier: id.toLowerCase() }), { carrier: null }).next.carrier).toBeNull();
  });

  it('refuses an invalid ivr_menu or consult_config with 400 invalid', () => {
    expect(invalidMessage(() => create({ ivr_menu: { '1': { action: 'dance' } } }))).toMatch(/action must be one of/);
    expect(invalidMessage(() => create({ consult_config: { factor: 'dob', x: 1 } }))).toMatch(/unknown key 'x'/);
  });

  it('lists as changed only the fields whose value changes; absent fields keep theirs', () => {
    const stored = withSettings({ record_calls: true, amd_enabled: true, ivr_menu: { '1': { action: 'hangup' } } });
    const { next, changed } = applyCampaignWrite(stored, { record_calls: true, ai_voice: true, amd_enabled: null, ivr_menu: { '1': { action: 'hangup' } } });
    expect(changed.sort()).toEqual(['ai_voice', 'amd_enabled']);
    expect(next).toEqual({ ...stored, ai_voice: true, amd_enabled: null });
    expect(applyCampaignWrite(stored, {}).changed).toEqual([]);
  });
});
