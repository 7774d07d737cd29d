const MAX_NAME_LENGTH = 200;

/**
 * The download name with everything a header or a file system could misread removed: control
 * characters, quotes, backslashes and path separators.
 */
export function sanitizeDownloadName(name: string): string {
  // eslint-disable-next-line no-control-regex
  const cleaned = name.replace(/[\u0000-\u001f\u007f"\\/]/g, '_').trim().slice(0, MAX_NAME_LENGTH);
  if (cleaned === '' || cleaned === '.' || cleaned === '..') throw new TypeError('downloadName must name a file');
  return cleaned;
}

/** `attachment` with an ASCII fallback name and the exact name in RFC 5987 form for every browser. */
export function attachmentDisposition(name: string): string {
  const safe = sanitizeDownloadName(name);
  const ascii = safe.replace(/[^\x20-\x7e]/g, '_');
  const encoded = encodeURIComponent(safe).replace(/['()*]/g, (ch) => `%${ch.charCodeAt(0).toString(16).toUpperCase()}`);
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encoded}`;
}
