/**
 * Every IANA zone some part of a US state or territory keeps (counties on another zone included:
 * the Florida panhandle, west Texas, the Idaho panhandle...). Quiet hours judge a consumer whose
 * address names a state in all of them, so a state never narrows what the number's own zones say.
 */
const STATE_ZONES: Readonly<Record<string, readonly string[]>> = {
  AL: ['America/Chicago'],
  AK: ['America/Anchorage', 'America/Adak', 'America/Juneau', 'America/Nome', 'America/Sitka', 'America/Yakutat', 'America/Metlakatla'],
  AZ: ['America/Phoenix', 'America/Denver'],
  AR: ['America/Chicago'],
  CA: ['America/Los_Angeles'],
  CO: ['America/Denver'],
  CT: ['America/New_York'],
  DE: ['America/New_York'],
  DC: ['America/New_York'],
  FL: ['America/New_York', 'America/Chicago'],
  GA: ['America/New_York'],
  HI: ['Pacific/Honolulu'],
  ID: ['America/Boise', 'America/Los_Angeles'],
  IL: ['America/Chicago'],
  IN: ['America/Indiana/Indianapolis', 'America/Chicago'],
  IA: ['America/Chicago'],
  KS: ['America/Chicago', 'America/Denver'],
  KY: ['America/New_York', 'America/Chicago'],
  LA: ['America/Chicago'],
  ME: ['America/New_York'],
  MD: ['America/New_York'],
  MA: ['America/New_York'],
  MI: ['America/Detroit', 'America/Menominee'],
  MN: ['America/Chicago'],
  MS: ['America/Chicago'],
  MO: ['America/Chicago'],
  MT: ['America/Denver'],
  NE: ['America/Chicago', 'America/Denver'],
  NV: ['America/Los_Angeles', 'America/Denver'],
  NH: ['America/New_York'],
  NJ: ['America/New_York'],
  NM: ['America/Denver'],
  NY: ['America/New_York'],
  NC: ['America/New_York'],
  ND: ['America/Chicago', 'America/Denver'],
  OH: ['America/New_York'],
  OK: ['America/Chicago'],
  OR: ['America/Los_Angeles', 'America/Boise'],
  PA: ['America/New_York'],
  RI: ['America/New_York'],
  SC: ['America/New_York'],
  SD: ['America/Chicago', 'America/Denver'],
  TN: ['America/Chicago', 'America/New_York'],
  TX: ['America/Chicago', 'America/Denver'],
  UT: ['America/Denver'],
  VT: ['America/New_York'],
  VA: ['America/New_York'],
  WA: ['America/Los_Angeles'],
  WV: ['America/New_York'],
  WI: ['America/Chicago'],
  WY: ['America/Denver'],
  PR: ['America/Puerto_Rico'],
  VI: ['America/St_Thomas'],
  GU: ['Pacific/Guam'],
  MP: ['Pacific/Saipan'],
  AS: ['Pacific/Pago_Pago'],
};

/** The zones of a two-letter state or territory code (case-insensitive); empty when unknown. */
export function zonesOfState(code: string | null | undefined): readonly string[] {
  if (!code) return [];
  return STATE_ZONES[code.trim().toUpperCase()] ?? [];
}
