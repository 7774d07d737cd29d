import { createHash } from 'node:crypto';

export const ARTIFACT_HASH_HEADER = 'X-Artifact-SHA256';

export const sha256Hex = (bytes: Buffer | string): string => createHash('sha256').update(bytes).digest('hex');

/**
 * Whether an Accept header asks for `media` rather than JSON: `media` is listed with q > 0 and at
 * least the weight of application/json (wildcards are ignored; no Accept means JSON).
 */
export function acceptsOver(accept: string | undefined, media: string): boolean {
  if (!accept) return false;
  const weights = new Map<string, number>();
  for (const part of accept.split(',')) {
    const [type, ...params] = part.split(';').map((s) => s.trim().toLowerCase());
    if (!type) continue;
    let q = 1;
    for (const param of params) {
      const m = /^q=([0-9.]+)$/.exec(param);
      if (m) q = Number(m[1]);
    }
    if (!Number.isFinite(q)) q = 0;
    weights.set(type, Math.max(weights.get(type) ?? 0, q));
  }
  const wanted = weights.get(media) ?? 0;
  return wanted > 0 && wanted >= (weights.get('application/json') ?? 0);
}

/**
 * One CSV field (RFC 4180): quoted when it holds a comma, quote, CR or LF. A text value starting
 * with =, +, -, @, TAB or CR is prefixed with an apostrophe so a spreadsheet never runs it as a
 * formula (OWASP CSV injection); the JSON format carries every value verbatim.
 */
export function csvField(value: string | number | null): string {
  if (value === null) return '';
  let text = String(value);
  if (typeof value === 'string' && /^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

export const csvLine = (fields: (string | number | null)[]): string => `${fields.map(csvField).join(',')}\r\n`;
