import { randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, open, readFile, rename, rm, statfs, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { ObjectNotFoundError, StorageUnavailableError } from './errors';
import { assertValidContentType, assertValidKey } from './keys';
import type { UrlSigner } from './signed-url';
import type { ObjectInfo, ObjectStore, ObjectStream, PutOptions, SignedUrl, SignedUrlOptions, StoreHealth } from './types';

export interface LocalStoreOptions {
  /** Root folder; objects live at `<baseDir>/<key>`, created on first use. */
  baseDir: string;
  /** Signs the `/files/<key>` URLs the API serves the objects from. */
  signer: UrlSigner;
  /** check() reports the store unavailable below this much free space (default 0: only a failing write counts). */
  minFreeBytes?: number;
  now?: () => Date;
}

const DEFAULT_CONTENT_TYPE = 'application/octet-stream';
/** Errors that say the disk cannot take or give data now, as opposed to a caller's mistake. */
const UNAVAILABLE_CODES = new Set(['ENOSPC', 'EDQUOT', 'EROFS', 'EACCES', 'EPERM', 'EIO', 'EMFILE', 'ENFILE', 'EBUSY', 'EAGAIN', 'ESTALE']);

function errorCode(err: unknown): string | undefined {
  return (err as NodeJS.ErrnoException | null)?.code;
}

function unavailable(what: string, err: unknown): StorageUnavailableError {
  return new StorageUnavailableError(`local store: ${what} failed (${errorCode(err) ?? 'error'})`, { cause: err });
}

function mapFsError(what: string, err: unknown): unknown {
  return UNAVAILABLE_CODES.has(errorCode(err) ?? '') ? unavailable(what, err) : err;
}

/**
 * Objects as plain files under a base folder. Writes go to `.tmp/` first and are renamed into place
 * (same file system, so the rename is atomic): a reader sees the old object or the new one, never a
 * torn one, and a failed write leaves nothing behind. The content type sits in `.meta/<key>.json`,
 * written just before the object is renamed in; the object file alone decides whether a key exists.
 */
export class LocalObjectStore implements ObjectStore {
  readonly kind = 'local' as const;
  private readonly baseDir: string;
  private readonly tmpDir: string;
  private readonly metaDir: string;
  private readonly now: () => Date;

  constructor(private readonly options: LocalStoreOptions) {
    this.baseDir = path.resolve(options.baseDir);
    this.tmpDir = path.join(this.baseDir, '.tmp');
    this.metaDir = path.join(this.baseDir, '.meta');
    this.now = options.now ?? (() => new Date());
  }

  private objectPath(key: string): string {
    assertValidKey(key);
    return path.join(this.baseDir, key);
  }

  private metaPath(key: string): string {
    return path.join(this.metaDir, `${key}.json`);
  }

  private tmpPath(): string {
    return path.join(this.tmpDir, `${randomUUID()}.part`);
  }

  async put(key: string, body: Buffer | Readable, options: PutOptions): Promise<void> {
    const target = this.objectPath(key);
    assertValidContentType(options.contentType);
    try {
      await mkdir(this.tmpDir, { recursive: true });
    } catch (err) {
      throw unavailable('preparing the folder', err);
    }
    const tmpObject = this.tmpPath();
    const tmpMeta = this.tmpPath();
    try {
      await this.writeTemp(tmpObject, body);
      try {
        await writeFile(tmpMeta, JSON.stringify({ contentType: options.contentType }), { flush: true });
        await mkdir(path.dirname(this.metaPath(key)), { recursive: true });
        await mkdir(path.dirname(target), { recursive: true });
        await rename(tmpMeta, this.metaPath(key));
        await rename(tmpObject, target);
      } catch (err) {
        throw mapFsError('storing', err);
      }
    } finally {
      await Promise.all([rm(tmpObject, { force: true }), rm(tmpMeta, { force: true })]);
    }
  }

  /**
   * Streams the body to a temp file with back-pressure. A failure of the file is the store's
   * (storage unavailable); a failure of the source is the caller's and passes through unchanged.
   */
  private async writeTemp(file: string, body: Buffer | Readable): Promise<void> {
    const sink = createWriteStream(file, { flags: 'wx', flush: true });
    let sinkError: unknown;
    sink.once('error', (err) => {
      sinkError = err;
    });
    try {
      await pipeline(Buffer.isBuffer(body) ? Readable.from([body]) : body, sink);
    } catch (err) {
      if (sinkError !== undefined && err === sinkError) throw unavailable('writing', err);
      throw err;
    }
  }

  async get(key: string): Promise<ObjectStream> {
    const file = this.objectPath(key);
    let handle;
    try {
      handle = await open(file, 'r');
    } catch (err) {
      if (errorCode(err) === 'ENOENT' || errorCode(err) === 'ENOTDIR') throw new ObjectNotFoundError(key);
      throw mapFsError('opening', err);
    }
    try {
      // Size from the open descriptor: the very version being streamed, even if a put renames a
      // new one into place meanwhile.
      const stat = await handle.stat();
      if (!stat.isFile()) throw new ObjectNotFoundError(key);
      return { body: handle.createReadStream(), size: stat.size, contentType: await this.contentTypeOf(key) };
    } catch (err) {
      await handle.close();
      throw mapFsError('reading', err);
    }
  }

  async head(key: string): Promise<ObjectInfo | null> {
    const file = this.objectPath(key);
    let handle;
    try {
      handle = await open(file, 'r');
    } catch (err) {
      if (errorCode(err) === 'ENOENT' || errorCode(err) === 'ENOTDIR') return null;
      throw mapFsError('opening', err);
    }
    try {
      const stat = await handle.stat();
      return stat.isFile() ? { size: stat.size, contentType: await this.contentTypeOf(key) } : null;
    } catch (err) {
      throw mapFsError('reading', err);
    } finally {
      await handle.close();
    }
  }

  private async contentTypeOf(key: string): Promise<string> {
    try {
      const meta = JSON.parse(await readFile(this.metaPath(key), 'utf8')) as { contentType?: unknown };
      return typeof meta.contentType === 'string' ? meta.contentType : DEFAULT_CONTENT_TYPE;
    } catch {
      return DEFAULT_CONTENT_TYPE;
    }
  }

  async delete(key: string): Promise<void> {
    const file = this.objectPath(key);
    for (const target of [file, this.metaPath(key)]) {
      try {
        await unlink(target);
      } catch (err) {
        if (errorCode(err) !== 'ENOENT' && errorCode(err) !== 'ENOTDIR') throw mapFsError('deleting', err);
      }
    }
  }

  signedUrl(key: string, options: SignedUrlOptions): Promise<SignedUrl> {
    // The executor form turns a bad key's TypeError into a rejection, like every other method.
    return new Promise((resolve) => resolve(this.options.signer.signedUrl(key, options, this.now())));
  }

  /** Writes, syncs and removes a probe file, then compares free space with minFreeBytes. */
  async check(): Promise<StoreHealth> {
    const probe = this.tmpPath();
    try {
      await mkdir(this.tmpDir, { recursive: true });
      await writeFile(probe, 'probe', { flush: true });
      await unlink(probe);
      const minFree = this.options.minFreeBytes ?? 0;
      if (minFree > 0) {
        const fs = await statfs(this.baseDir);
        const free = fs.bavail * fs.bsize;
        if (free < minFree) return { ok: false, reason: `local store: ${free} bytes free, below the ${minFree} required` };
      }
      return { ok: true };
    } catch (err) {
      await rm(probe, { force: true }).catch(() => undefined);
      return { ok: false, reason: `local store: probe write failed (${errorCode(err) ?? 'error'})` };
    }
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}
