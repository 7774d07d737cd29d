import { parsePhoneNumberFromString } from 'libphonenumber-js/max';
import * as library from 'libphonenumber-geo-carrier';
import { geocoder, timezones } from '../../src/lib/phone-geo-metadata';

// Single-zone and split-zone NANP area codes, a territory, toll-free, other countries, a prefix
// with no geocode and a country without a geocoder file.
const NUMBERS = [
  '+13035550100',
  '+16175550100',
  '+19075550100',
  '+18125550100',
  '+16055550100',
  '+13085550100',
  '+18085550100',
  '+16715550100',
  '+18885550149',
  '+442079460000',
  '+61291234567',
  '+861012345678',
  '+4930123456',
  '+33142685300',
  '+5215512345678',
  '+97142345678',
];

describe('phone geo metadata read once', () => {
  it.each(NUMBERS)('answers what the library answers for %s', async (e164) => {
    const parsed = parsePhoneNumberFromString(e164)!;
    expect(parsed).toBeDefined();
    expect(await timezones(parsed)).toEqual(await library.timezones(parsed));
    expect(await geocoder(parsed, 'en')).toEqual(await library.geocoder(parsed, 'en'));
  });
});
