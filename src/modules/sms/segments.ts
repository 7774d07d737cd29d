/**
 * How a text travels on the air (3GPP TS 23.038 / 23.040): GSM 7-bit when every character is in the
 * default alphabet or its extension table, otherwise UCS-2. The segment count is what providers bill,
 * so the ledger's cost follows it.
 */

export type SmsEncoding = 'gsm7' | 'ucs2';

export interface SegmentInfo {
  encoding: SmsEncoding;
  segments: number;
  /** Septets (gsm7) or UTF-16 code units (ucs2) of the whole body. */
  units: number;
}

// The GSM 03.38 default alphabet (one septet each). Written out rather than derived: a character
// outside this set silently switches the whole message to UCS-2, which more than doubles the cost.
const GSM7_BASIC =
  '@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞ\u001bÆæßÉ !"#¤%&\'()*+,-./0123456789:;<=>?' +
  '¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà';
// Reached through the escape septet: two septets each.
const GSM7_EXTENSION = '\f^{}\\[~]|€';

const BASIC = new Set(GSM7_BASIC);
const EXTENSION = new Set(GSM7_EXTENSION);

export const GSM7_SINGLE = 160;
export const GSM7_CONCAT = 153;
export const UCS2_SINGLE = 70;
export const UCS2_CONCAT = 67;

/** Septets of `body` in GSM-7, or null when a character has no GSM-7 form. */
export function gsm7Septets(body: string): number | null {
  let septets = 0;
  for (const ch of body) {
    if (BASIC.has(ch)) septets += 1;
    else if (EXTENSION.has(ch)) septets += 2;
    else return null;
  }
  return septets;
}

/**
 * Concatenated GSM-7 segments: an escape and its character must share a segment (a split pair
 * would decode as two wrong characters), so a two-septet character that does not fit opens the
 * next segment.
 */
function gsm7Segments(body: string, total: number): number {
  if (total <= GSM7_SINGLE) return 1;
  let segments = 1;
  let used = 0;
  for (const ch of body) {
    const width = EXTENSION.has(ch) ? 2 : 1;
    if (used + width > GSM7_CONCAT) {
      segments += 1;
      used = 0;
    }
    used += width;
  }
  return segments;
}

/** UCS-2 (UTF-16) segments: a surrogate pair is one character and never split across segments. */
function ucs2Segments(body: string, total: number): number {
  if (total <= UCS2_SINGLE) return 1;
  let segments = 1;
  let used = 0;
  for (const ch of body) {
    const width = ch.length; // 2 for an astral character (a surrogate pair)
    if (used + width > UCS2_CONCAT) {
      segments += 1;
      used = 0;
    }
    used += width;
  }
  return segments;
}

/** The encoding, segment count and unit count of a message body. An empty body is one segment. */
export function segmentInfo(body: string): SegmentInfo {
  const septets = gsm7Septets(body);
  if (septets !== null) return { encoding: 'gsm7', segments: gsm7Segments(body, septets), units: septets };
  const units = body.length;
  return { encoding: 'ucs2', segments: ucs2Segments(body, units), units };
}
