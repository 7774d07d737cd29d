import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';
import { sanitizeDownloadName } from './content-disposition';
import { assertValidExpiry, assertValidKey, isValidKey } from './keys';
import type { SignedUrl, SignedUrlOptions } from './types';

/** HKDF context: the URL key is bound to this one use, so it never equals the at-rest cipher key. */
const HKDF_INFO = 'dialer-control-plane/object-store/signed-url/v1';
const SIG_PATTERN = /^[0-9a-f]{64}$/;
const EXPIRES_PATTERN = /^[0-9]{1,12}$/;

/**
 * Signs and verifies the local store's download URLs:
 * `${publicBaseUrl}/files/<key>?expires=<unix seconds>&sig=<hex>[&name=<download name>]`, where sig
 * is HMAC-SHA256 over `${key}\n${expires}` (and `\n${name}` when a download name is given, so the
 * name cannot be swapped either) under a key derived from the app encryption key. Neither keys nor
 * expiries can contain a newline, so the message is unambiguous.
 */
export class UrlSigner {
  private readonly macKey: Buffer;
  private readonly base: string;

  constructor(options: { secret: string; publicBaseUrl: string; pathPrefix?: string }) {
    if (!options.secret) throw new TypeError('a signing secret is required');
    this.macKey = Buffer.from(hkdfSync('sha256', options.secret, Buffer.alloc(0), HKDF_INFO, 32));
    this.base = `${options.publicBaseUrl.replace(/\/+$/, '')}${options.pathPrefix ?? '/files'}`;
  }

  private mac(key: string, expires: string, downloadName: string | undefined): Buffer {
    const message = downloadName === undefined ? `${key}\n${expires}` : `${key}\n${expires}\n${downloadName}`;
    return createHmac('sha256', this.macKey).update(message, 'utf8').digest();
  }

  sign(key: string, expires: number, downloadName?: string): string {
    assertValidKey(key);
    return this.mac(key, String(expires), downloadName).toString('hex');
  }

  signedUrl(key: string, options: SignedUrlOptions, now: Date = new Date()): SignedUrl {
    assertValidKey(key);
    assertValidExpiry(options.expiresInSeconds);
    const expires = Math.floor(now.getTime() / 1000) + options.expiresInSeconds;
    const name = options.downloadName === undefined ? undefined : sanitizeDownloadName(options.downloadName);
    const query = new URLSearchParams({ expires: String(expires), sig: this.sign(key, expires, name) });
    if (name !== undefined) query.set('name', name);
    return { url: `${this.base}/${key}?${query.toString()}`, expires_at: new Date(expires * 1000).toISOString() };
  }

  /**
   * True only for an untampered, unexpired signature. Malformed input is simply false; the
   * comparison is constant-time so the signature cannot be guessed byte by byte.
   */
  verifySignedPath(key: string, expires: string | number, sig: string, now: Date = new Date(), downloadName?: string): boolean {
    const expiresText = String(expires);
    if (!isValidKey(key) || !EXPIRES_PATTERN.test(expiresText) || typeof sig !== 'string' || !SIG_PATTERN.test(sig)) return false;
    if (now.getTime() > Number(expiresText) * 1000) return false;
    return timingSafeEqual(this.mac(key, expiresText, downloadName), Buffer.from(sig, 'hex'));
  }
}
