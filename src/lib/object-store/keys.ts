const MAX_KEY_LENGTH = 1024;
/**
 * A segment may not start with a dot: that rules out `.` and `..` and keeps the local store's own
 * `.tmp` and `.meta` folders out of every key's reach.
 */
const SEGMENT = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,254}$/;

export function isValidKey(key: unknown): key is string {
  if (typeof key !== 'string' || key.length === 0 || key.length > MAX_KEY_LENGTH || key.includes('..')) return false;
  return key.split('/').every((segment) => SEGMENT.test(segment));
}

/** Throws a TypeError for a key outside `segment(/segment)*` over [A-Za-z0-9._-]. */
export function assertValidKey(key: unknown): asserts key is string {
  if (!isValidKey(key)) throw new TypeError('object key must be a relative path of [A-Za-z0-9._-] segments without ".." or a leading "/" or "."');
}

const MEDIA_TYPE = /^[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*\/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*(\s*;\s*[A-Za-z0-9!#$&^_.+-]+=("[^"\\\r\n]*"|[A-Za-z0-9!#$&^_.+-]+))*$/;

/** Content types become response headers: anything but a well-formed media type is refused. */
export function assertValidContentType(contentType: unknown): asserts contentType is string {
  if (typeof contentType !== 'string' || contentType.length > 200 || !MEDIA_TYPE.test(contentType)) {
    throw new TypeError('contentType must be a media type such as audio/wav');
  }
}

export const MAX_SIGNED_URL_SECONDS = 7 * 24 * 3600;

export function assertValidExpiry(expiresInSeconds: unknown): asserts expiresInSeconds is number {
  if (typeof expiresInSeconds !== 'number' || !Number.isInteger(expiresInSeconds) || expiresInSeconds < 1 || expiresInSeconds > MAX_SIGNED_URL_SECONDS) {
    throw new TypeError(`expiresInSeconds must be an integer from 1 to ${MAX_SIGNED_URL_SECONDS}`);
  }
}
