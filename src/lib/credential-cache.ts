/**
 * Resolved bearer credentials, kept for at most `ttlMs` per API process. A revocation, a
 * suspension or a disabled user written by another process (another API process, a worker, the
 * operator CLI) is honoured within `ttlMs`; one written by a request of this process is honoured on
 * the next request, because every write request drops what it may have changed (`forgetCachedAfterWrite`).
The same cache keeps the tenant rows `GET /v1/me` answers with (keyed by tenant), on the same terms.
 * Only found credentials are kept: an unknown token is looked up every time, so a key minted on
 * another process works at once.
 */
export interface CredentialCacheOptions {
  /** Milliseconds an entry lives; 0 turns the cache off (every request resolves in PostgreSQL). */
  ttlMs: number;
  /** Entries kept at most; the oldest is dropped first. */
  maxEntries?: number;
  now?: () => number;
}

interface Entry<T> {
  value: T;
  tenantId: string;
  expiresAt: number;
}

export class CredentialCache<T> {
  private readonly entries = new Map<string, Entry<T>>();
  private readonly ttlMs: number;
  private readonly maxEntries: number;
  private readonly now: () => number;

  constructor(o: CredentialCacheOptions) {
    this.ttlMs = o.ttlMs;
    this.maxEntries = o.maxEntries ?? 10_000;
    this.now = o.now ?? Date.now;
  }

  get size(): number {
    return this.entries.size;
  }

  get(tokenHash: string): T | null {
    const e = this.entries.get(tokenHash);
    if (!e) return null;
    if (e.expiresAt <= this.now()) {
      this.entries.delete(tokenHash);
      return null;
    }
    return e.value;
  }

  /** Keeps `value` for the TTL, never past `notAfter` (a session's own expiry, epoch ms). */
  set(tokenHash: string, tenantId: string, value: T, notAfter?: number): void {
    if (this.ttlMs <= 0) return;
    const expiresAt = Math.min(this.now() + this.ttlMs, notAfter ?? Number.POSITIVE_INFINITY);
    if (expiresAt <= this.now()) return;
    this.entries.delete(tokenHash);
    if (this.entries.size >= this.maxEntries) {
      const oldest = this.entries.keys().next();
      if (!oldest.done) this.entries.delete(oldest.value);
    }
    this.entries.set(tokenHash, { value, tenantId, expiresAt });
  }

  forgetTenant(tenantId: string): void {
    for (const [hash, e] of this.entries) if (e.tenantId === tenantId) this.entries.delete(hash);
  }

  clear(): void {
    this.entries.clear();
  }
}
