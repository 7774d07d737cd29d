import { isIanaZone, validateImportItem } from '../../src/modules/debts/debt-import.validate';

const ok = (raw: unknown) => {
  const result = validateImportItem(raw);
  if (!result.ok) throw new Error(`expected ok, got: ${result.error}`);
  return result.item;
};
const error = (raw: unknown) => {
  const result = validateImportItem(raw);
  if (result.ok) throw new Error('expected a failure');
  return result.error;
};

describe('validateImportItem', () => {
  it('normalizes a full item: trimmed strings, uppercase state, prior attempts capped at 7, borough from the postal code', () => {
    expect(
      ok({
        external_ref: '  ext-1 ',
        consumer_ref: 'c-1',
        debt_type: 'student_loan',
        account_number: ' 0042 ',
        amount_cents: 0,
        currency: 'USD',
        state: 'disputed',
        campaign_id: '6F1C2F0E-2B8A-4C1E-9A57-1F0F8A7C9D10',
        prior_attempts_7d: 40,
        contacts: [
          { phone_e164: '+12125550123', line_type: 'unknown', timezone: 'America/New_York', postal_code: '10001', is_primary: true },
          { phone_e164: '+14155550123', us_state: 'ca', city: ' San Francisco ', consumer_ref: 'k' },
        ],
      }),
    ).toEqual({
      external_ref: 'ext-1',
      consumer_ref: 'c-1',
      debt_type: 'student_loan',
      account_number: '0042',
      amount_cents: 0,
      currency: 'USD',
      state: 'disputed',
      campaign_id: '6f1c2f0e-2b8a-4c1e-9a57-1f0f8a7c9d10',
      prior_attempts_7d: 7,
      contacts: [
        {
          phone_e164: '+12125550123',
          line_type: 'unknown',
          timezone: 'America/New_York',
          postal_code: '10001',
          nyc_borough: 'manhattan',
          postal_state: 'NY',
          us_state: 'NY',
          is_primary: true,
        },
        { phone_e164: '+14155550123', us_state: 'CA', city: 'San Francisco', consumer_ref: 'k', is_primary: false },
      ],
    });
  });

  it('reads omitted and empty-string fields alike: absent from the result (leave unchanged)', () => {
    const blank = ok({
      external_ref: 'e',
      consumer_ref: 'c',
      debt_type: '',
      account_number: '  ',
      amount_cents: '',
      currency: '',
      state: '',
      campaign_id: '',
      prior_attempts_7d: '',
      dob: '',
      ssn_last4: ' ',
      pin: '',
      contacts: [
        { phone_e164: '+12125550123', line_type: '', timezone: '', us_state: '', city: '', postal_code: '', consumer_ref: '', is_primary: '', consent_given_on: '' },
      ],
    });
    expect(blank).toEqual({ external_ref: 'e', consumer_ref: 'c', contacts: [{ phone_e164: '+12125550123', is_primary: false }] });
    expect(ok({ external_ref: 'e', consumer_ref: 'c', contacts: '' })).toEqual({ external_ref: 'e', consumer_ref: 'c', contacts: [] });
  });

  it('keeps the borough null (but resolved) for a postal code outside the city, so a new code clears an old borough', () => {
    expect(ok({ external_ref: 'e', consumer_ref: 'c', contacts: [{ phone_e164: '+12125550123', postal_code: '90210' }] }).contacts[0]).toEqual({
      phone_e164: '+12125550123',
      postal_code: '90210',
      nyc_borough: null,
      postal_state: 'CA',
      us_state: 'CA',
      is_primary: false,
    });
  });

  it("keeps a postal code's state beside a different us_state, and null for a code that resolves to none", () => {
    const [inNyc, abroad] = ok({
      external_ref: 'e',
      consumer_ref: 'c',
      contacts: [
        { phone_e164: '+12125550123', postal_code: '10451', us_state: 'CT' },
        { phone_e164: '+12125550124', postal_code: 'SW1A 1AA', us_state: 'NJ' },
      ],
    }).contacts;
    expect(inNyc).toMatchObject({ us_state: 'CT', postal_state: 'NY', nyc_borough: 'bronx' });
    expect(abroad).toMatchObject({ us_state: 'NJ', postal_state: null, nyc_borough: null });
  });

  it('takes the verification data and the consent date: dob in the past, ssn_last4 four digits, pin 4 to 8 digits', () => {
    const item = ok({
      external_ref: 'e',
      consumer_ref: 'c',
      dob: ' 1961-07-23 ',
      ssn_last4: '0042',
      pin: '00123456',
      contacts: [{ phone_e164: '+12125550123', consent_given_on: '2021-03-14' }],
    });
    expect(item).toMatchObject({ dob: '1961-07-23', ssn_last4: '0042', pin: '00123456', contacts: [{ consent_given_on: '2021-03-14' }] });
    expect(ok({ external_ref: 'e', consumer_ref: 'c', pin: '1234' }).pin).toBe('1234');
    const today = new Date().toISOString().slice(0, 10);
    expect(ok({ external_ref: 'e', consumer_ref: 'c', contacts: [{ phone_e164: '+12125550123', consent_given_on: today }] }).contacts[0]!.consent_given_on).toBe(today);
  });

  it('fails a malformed verification value or consent date with the field and the rule, never the value', () => {
    const tomorrow = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
    const today = new Date().toISOString().slice(0, 10);
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ dob: '1961-02-30' }, "field 'dob': must be a date YYYY-MM-DD"],
      [{ dob: '23/07/1961' }, "field 'dob': must be a date YYYY-MM-DD"],
      [{ dob: '1961-7-23' }, "field 'dob': must be a date YYYY-MM-DD"],
      [{ dob: today }, "field 'dob': must be a date in the past"],
      [{ dob: tomorrow }, "field 'dob': must be a date in the past"],
      [{ dob: null }, "field 'dob' must not be null (omit it to keep the stored value)"],
      [{ dob: 19610723 }, "field 'dob': must be a string"],
      [{ ssn_last4: '123' }, "field 'ssn_last4': must be exactly 4 digits"],
      [{ ssn_last4: '12345' }, "field 'ssn_last4': must be exactly 4 digits"],
      [{ ssn_last4: '12a4' }, "field 'ssn_last4': must be exactly 4 digits"],
      [{ ssn_last4: 1234 }, "field 'ssn_last4': must be a string of exactly 4 digits"],
      [{ ssn_last4: null }, "field 'ssn_last4' must not be null (omit it to keep the stored value)"],
      [{ pin: '987' }, "field 'pin': must be 4 to 8 digits"],
      [{ pin: '987654321' }, "field 'pin': must be 4 to 8 digits"],
      [{ pin: '98 76' }, "field 'pin': must be 4 to 8 digits"],
      [{ pin: '９８７６' }, "field 'pin': must be 4 to 8 digits"],
      [{ pin: null }, "field 'pin' must not be null (omit it to keep the stored value)"],
      [{ contacts: [{ phone_e164: '+12125550123', consent_given_on: tomorrow }] }, "field 'contacts[0].consent_given_on': must not be in the future"],
      [{ contacts: [{ phone_e164: '+12125550123', consent_given_on: '2021-13-01' }] }, "field 'contacts[0].consent_given_on': must be a date YYYY-MM-DD"],
      [{ contacts: [{ phone_e164: '+12125550123', consent_given_on: null }] }, "field 'contacts[0].consent_given_on' must not be null (omit it to keep the stored value)"],
    ];
    for (const [fields, message] of cases) {
      const got = error({ external_ref: 'e', consumer_ref: 'c', ...fields });
      expect([fields, got]).toEqual([fields, message]);
      for (const value of Object.values(fields)) if (typeof value === 'string' && value.length >= 3) expect(got).not.toContain(value);
    }
  });

  it('names the field of the first problem', () => {
    expect(error({ consumer_ref: 'c' })).toBe("field 'external_ref' is required");
    expect(error({ external_ref: 'e', consumer_ref: 'c', amount_cents: 2 ** 53 })).toMatch(/^field 'amount_cents'/);
    expect(error({ external_ref: 'e', consumer_ref: 'c', nope: 1, amount_cents: -1 })).toBe("unknown field: 'nope'");
    expect(error({ external_ref: 'e', consumer_ref: 'c', contacts: [{ phone_e164: '+12125550123' }, { phone_e164: '+12125550124', x: 1, y: 2 }] })).toBe(
      "unknown fields: 'contacts[1].x', 'contacts[1].y'",
    );
    expect(error({ external_ref: 'e', consumer_ref: 'c', contacts: Array.from({ length: 101 }, (_, i) => ({ phone_e164: `+1212555${1000 + i}` })) })).toMatch(
      /^field 'contacts': at most 100/,
    );
    expect(error({ external_ref: 'e', consumer_ref: 'c', contacts: [{ phone_e164: '+12125550123', is_primary: true }, { phone_e164: '+12125550124', is_primary: true }] })).toMatch(
      /^field 'contacts\[1\]\.is_primary'/,
    );
    expect(error({ external_ref: 'e', consumer_ref: 'c', contacts: [{ phone_e164: '+12125550123' }, { phone_e164: ' +12125550123 ' }] })).toMatch(
      /^field 'contacts\[1\]\.phone_e164': duplicate/,
    );
    expect(error({ external_ref: 'e', consumer_ref: 'c', account_number: 'a\u0000b' })).toMatch(/^field 'account_number'.*control/);
    // JSON.parse makes __proto__ an own key, as the request body parser does.
    expect(error(JSON.parse('{"external_ref": "e", "consumer_ref": "c", "__proto__": {"x": 1}}'))).toBe("unknown field: '__proto__'");
  });

  it('knows IANA zones', () => {
    for (const zone of ['America/New_York', 'America/Indiana/Indianapolis', 'Pacific/Honolulu', 'UTC', 'Europe/London']) expect(isIanaZone(zone)).toBe(true);
    for (const zone of ['America/Nowhere', '+05:00', 'EST+5', '', 'a'.repeat(80), 'America/New_York ']) expect(isIanaZone(zone)).toBe(false);
  });
});
