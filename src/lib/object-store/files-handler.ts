import { Readable } from 'node:stream';
import type { Context } from 'hono';
import { forbidden, notFound } from '../errors';
import { attachmentDisposition } from './content-disposition';
import { ObjectNotFoundError, StorageUnavailableError } from './errors';
import type { ObjectStore } from './types';

export interface SignedPathVerifier {
  verifySignedPath(key: string, expires: string, sig: string, now?: Date, downloadName?: string): boolean;
}

export interface FilesHandlerOptions {
  /** The path the handler is mounted under; the rest of the path is the key. */
  prefix?: string;
  now?: () => Date;
}

/**
 * `GET /files/<key>?expires=&sig=[&name=]`: the local store's signed download. The signature is the
 * whole authorization (no bearer token), so anything short of a valid one is 403 without saying
 * which part failed. The body is streamed, never buffered; `no-store` keeps recordings out of
 * shared caches.
 */
export function filesHandler(store: ObjectStore, verifier: SignedPathVerifier, options: FilesHandlerOptions = {}) {
  const prefix = options.prefix ?? '/files/';
  const now = options.now ?? (() => new Date());
  return async (c: Context): Promise<Response> => {
    const path = c.req.path;
    const key = path.startsWith(prefix) ? path.slice(prefix.length) : '';
    const expires = c.req.query('expires') ?? '';
    const sig = c.req.query('sig') ?? '';
    const name = c.req.query('name');
    if (!verifier.verifySignedPath(key, expires, sig, now(), name)) {
      return c.json(forbidden('the link is invalid or has expired').toBody(), 403);
    }
    try {
      const object = await store.get(key);
      return c.body(Readable.toWeb(object.body) as ReadableStream, 200, {
        'content-type': object.contentType,
        'content-length': String(object.size),
        'content-disposition': attachmentDisposition(name ?? key.slice(key.lastIndexOf('/') + 1)),
        'cache-control': 'private, no-store',
        'x-content-type-options': 'nosniff',
      });
    } catch (err) {
      if (err instanceof ObjectNotFoundError) return c.json(notFound('no such file').toBody(), 404);
      if (err instanceof StorageUnavailableError) return c.json(err.toBody(), 503);
      throw err;
    }
  };
}
