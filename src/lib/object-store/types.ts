import type { Readable } from 'node:stream';

export interface PutOptions {
  /** A media type such as `audio/wav`; served back as Content-Type. */
  contentType: string;
}

export interface ObjectInfo {
  size: number;
  contentType: string;
}

/** An object being read: the body stream with the size and type of that very version. */
export interface ObjectStream extends ObjectInfo {
  body: Readable;
}

export interface SignedUrlOptions {
  /** 1 s to 7 days (the SigV4 presigning ceiling, applied to both stores alike). */
  expiresInSeconds: number;
  /** The file name the browser saves the download as (Content-Disposition: attachment). */
  downloadName?: string;
}

export interface SignedUrl {
  url: string;
  /** ISO 8601, the instant the URL stops working. */
  expires_at: string;
}

export type StoreHealth = { ok: true } | { ok: false; reason: string };

/**
 * Where recordings and recording exports live. Keys are relative paths over a safe alphabet
 * (see keys.ts); a malformed key is a TypeError. "Cannot accept or serve now" is a
 * StorageUnavailableError (503 storage_unavailable), a missing object an ObjectNotFoundError.
 */
export interface ObjectStore {
  readonly kind: 'local' | 's3';
  /** Stores the body under the key, replacing any previous object; a Readable is streamed, never held whole. */
  put(key: string, body: Buffer | Readable, options: PutOptions): Promise<void>;
  get(key: string): Promise<ObjectStream>;
  head(key: string): Promise<ObjectInfo | null>;
  /** Removes the object; removing an absent one succeeds. */
  delete(key: string): Promise<void>;
  signedUrl(key: string, options: SignedUrlOptions): Promise<SignedUrl>;
  /** Whether the store can take a write now; never throws. */
  check(): Promise<StoreHealth>;
  /** Releases sockets and handles (shutdown, tests). */
  close(): Promise<void>;
}
