import http from 'node:http';
import https from 'node:https';
import type { Readable } from 'node:stream';
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  PutObjectCommand,
  S3Client,
  UploadPartCommand,
  type CompletedPart,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { checkEgressUrl, egressLookup, originOf, type EgressPolicy } from '../egress';
import { attachmentDisposition } from './content-disposition';
import { ObjectNotFoundError, StorageUnavailableError } from './errors';
import { assertValidContentType, assertValidExpiry, assertValidKey, isValidKey } from './keys';
import { DEFAULT_PART_SIZE, MIN_PART_SIZE, partSizeFor, partsOf } from './parts';
import type { ObjectInfo, ObjectStore, ObjectStream, PutOptions, SignedUrl, SignedUrlOptions, StoreHealth } from './types';

export interface S3StoreOptions {
  bucket: string;
  region: string;
  /** An S3-compatible endpoint (MinIO, R2, …); unset means AWS itself. Must pass checkS3Endpoint. */
  endpoint?: string;
  /** Path-style addressing (`endpoint/bucket/key`), which most S3-compatible servers need. */
  forcePathStyle?: boolean;
  /** Static credentials; unset means the SDK's default chain (environment, profile, instance role). */
  credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
  /** Folder every key is stored under, so one bucket can serve several deployments. */
  keyPrefix?: string;
  /** First multipart part size for streamed puts: 8 MiB unless set, never below S3's 5 MiB minimum (see partSizeFor). */
  partSizeBytes?: number;
  /** Attempts per request including the first (SDK retry with backoff); default 3. */
  maxAttempts?: number;
  connectionTimeoutMs?: number;
  /** A socket idle this long fails the request (a stalled server, not a slow large download). */
  socketTimeoutMs?: number;
  /**
   * The deployment's egress policy: when given, every connection is checked again at connect time
   * on the address actually resolved (egressLookup), as webhook deliveries are.
   */
  egress?: EgressPolicy;
  now?: () => Date;
}

const DEFAULT_CONTENT_TYPE = 'application/octet-stream';

/**
 * The egress check for a configured S3 endpoint, for the deployment to run once at startup (the
 * store itself never touches the network before its first request). The same rules as webhook
 * endpoints: https on 443 to a public host, unless the origin is in EGRESS_ALLOWLIST (a MinIO on
 * the private network must be listed there explicitly). Throws EgressRefusedError.
 */
export async function checkS3Endpoint(endpoint: string | undefined, policy: EgressPolicy): Promise<void> {
  if (endpoint === undefined) return;
  await checkEgressUrl(endpoint, policy);
}

/** S3 error names that mean the store is misconfigured or refusing us, whatever their status. */
const UNAVAILABLE_NAMES = new Set([
  'NoSuchBucket',
  'AccessDenied',
  'InvalidAccessKeyId',
  'SignatureDoesNotMatch',
  'ExpiredToken',
  'InvalidToken',
  'TokenRefreshRequired',
  'CredentialsProviderError',
  'TimeoutError',
  'RequestTimeout',
  'RequestTimeTooSkewed',
  'SlowDown',
]);

interface SdkError {
  name?: string;
  code?: string;
  $metadata?: { httpStatusCode?: number };
}

function statusOf(err: unknown): number | undefined {
  return (err as SdkError | null)?.$metadata?.httpStatusCode;
}

/**
 * Network failures (no HTTP status at all), 5xx, throttling and refused credentials are the
 * store being unavailable; any other 4xx is a bug in the request and surfaces unchanged.
 */
function isUnavailable(err: unknown): boolean {
  if (!(err instanceof Error) || err instanceof TypeError || err instanceof RangeError) return false;
  const status = statusOf(err);
  if (UNAVAILABLE_NAMES.has(err.name)) return true;
  if (status === undefined) return true;
  return status >= 500 || status === 401 || status === 403 || status === 429;
}

function isMissingObject(err: unknown): boolean {
  const name = (err as SdkError | null)?.name;
  return name === 'NoSuchKey' || name === 'NotFound' || (statusOf(err) === 404 && name !== 'NoSuchBucket');
}

function agentLookup(endpoint: string | undefined, policy: EgressPolicy | undefined): { httpAgent?: http.Agent; httpsAgent?: https.Agent } {
  if (policy === undefined) return {};
  const origin = endpoint === undefined ? null : originOf(new URL(endpoint));
  const allowlisted =
    origin !== null &&
    policy.allowlist.some((entry) => {
      try {
        return originOf(new URL(entry)) === origin;
      } catch {
        return entry === origin;
      }
    });
  const lookup = egressLookup(allowlisted, policy.resolve);
  return { httpAgent: new http.Agent({ keepAlive: true, lookup }), httpsAgent: new https.Agent({ keepAlive: true, lookup }) };
}

/**
 * Any S3-compatible store through the AWS SDK. A Buffer is one PutObject; a stream is a multipart
 * upload of 8 MiB parts (larger past the first 1,000, see partSizeFor) sent one at a time, aborted
 * on any failure so no orphan parts are billed, or a single PutObject when it ends within the
 * first part. Signed URLs are SigV4 presigned GetObject URLs, so their lifetime is also bounded by
 * the credentials' own (temporary role credentials may expire sooner than the URL says). The
 * credentials need s3:ListBucket besides Get/Put/DeleteObject and the multipart actions: without it
 * S3 answers a missing key with 403, which reads as unavailable instead of absent.
 */
export class S3ObjectStore implements ObjectStore {
  readonly kind = 's3' as const;
  private readonly client: S3Client;
  private readonly bucket: string;
  private readonly prefix: string;
  private readonly partSize: (partNumber: number) => number;
  private readonly now: () => Date;

  constructor(options: S3StoreOptions) {
    if (!options.bucket) throw new TypeError('an S3 bucket is required');
    if (options.keyPrefix !== undefined && options.keyPrefix !== '' && !isValidKey(options.keyPrefix)) throw new TypeError('keyPrefix must be a valid key');
    this.bucket = options.bucket;
    this.prefix = options.keyPrefix ? `${options.keyPrefix}/` : '';
    const base = Math.max(MIN_PART_SIZE, options.partSizeBytes ?? DEFAULT_PART_SIZE);
    this.partSize = (n) => partSizeFor(n, base);
    this.now = options.now ?? (() => new Date());
    this.client = new S3Client({
      region: options.region,
      endpoint: options.endpoint,
      forcePathStyle: options.forcePathStyle ?? false,
      credentials: options.credentials,
      maxAttempts: options.maxAttempts ?? 3,
      // The SDK's default flexible checksums are AWS-only headers many S3-compatible servers reject
      // or mishandle on multipart uploads; SigV4 already protects every request body.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      requestHandler: {
        connectionTimeout: options.connectionTimeoutMs ?? 5000,
        socketTimeout: options.socketTimeoutMs ?? 30_000,
        ...agentLookup(options.endpoint, options.egress),
      },
    });
  }

  private fullKey(key: string): string {
    assertValidKey(key);
    return `${this.prefix}${key}`;
  }

  /** Sends one command, turning "cannot reach or use the store" into StorageUnavailableError. */
  private async send<T>(what: string, call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (err) {
      if (isUnavailable(err)) {
        const e = err as SdkError & Error;
        throw new StorageUnavailableError(`s3 store: ${what} failed (${e.name}${statusOf(err) ? ` ${statusOf(err)}` : ''}${e.code ? ` ${e.code}` : ''})`, { cause: err });
      }
      throw err;
    }
  }

  async put(key: string, body: Buffer | Readable, options: PutOptions): Promise<void> {
    const Key = this.fullKey(key);
    assertValidContentType(options.contentType);
    if (Buffer.isBuffer(body)) {
      await this.putBuffer(Key, body, options.contentType);
      return;
    }
    const parts = partsOf(body, this.partSize);
    try {
      const first = await parts.next();
      const firstPart = first.done ? Buffer.alloc(0) : first.value;
      // Only the final part can be short, so a short first part is the whole stream.
      if (firstPart.length < this.partSize(1)) await this.putBuffer(Key, firstPart, options.contentType);
      else await this.putMultipart(Key, firstPart, parts, options.contentType);
    } finally {
      // Stops reading (and destroys) the source when an upload failed halfway through it.
      await parts.return(undefined);
    }
  }

  private async putBuffer(Key: string, body: Buffer, ContentType: string): Promise<void> {
    await this.send('put', () => this.client.send(new PutObjectCommand({ Bucket: this.bucket, Key, Body: body, ContentLength: body.length, ContentType })));
  }

  private async putMultipart(Key: string, firstPart: Buffer, rest: AsyncGenerator<Buffer>, ContentType: string): Promise<void> {
    const created = await this.send('multipart start', () => this.client.send(new CreateMultipartUploadCommand({ Bucket: this.bucket, Key, ContentType })));
    const UploadId = created.UploadId;
    if (!UploadId) throw new StorageUnavailableError('s3 store: multipart start returned no upload id');
    try {
      const done: CompletedPart[] = [];
      let part: Buffer | undefined = firstPart;
      for (let PartNumber = 1; part !== undefined; PartNumber += 1) {
        const Body: Buffer = part;
        const uploaded = await this.send('part upload', () =>
          this.client.send(new UploadPartCommand({ Bucket: this.bucket, Key, UploadId, PartNumber, Body, ContentLength: Body.length })),
        );
        done.push({ PartNumber, ETag: uploaded.ETag });
        const next = await rest.next();
        part = next.done ? undefined : next.value;
      }
      await this.send('multipart complete', () =>
        this.client.send(new CompleteMultipartUploadCommand({ Bucket: this.bucket, Key, UploadId, MultipartUpload: { Parts: done } })),
      );
    } catch (err) {
      // Best effort: a store too broken to abort lets its lifecycle rule expire the upload.
      await this.client.send(new AbortMultipartUploadCommand({ Bucket: this.bucket, Key, UploadId })).catch(() => undefined);
      throw err;
    }
  }

  async get(key: string): Promise<ObjectStream> {
    const Key = this.fullKey(key);
    let res;
    try {
      res = await this.send('get', () => this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key })));
    } catch (err) {
      if (isMissingObject(err)) throw new ObjectNotFoundError(key);
      throw err;
    }
    if (res.Body === undefined) throw new ObjectNotFoundError(key);
    return { body: res.Body as Readable, size: res.ContentLength ?? 0, contentType: res.ContentType ?? DEFAULT_CONTENT_TYPE };
  }

  async head(key: string): Promise<ObjectInfo | null> {
    const Key = this.fullKey(key);
    try {
      const res = await this.send('head', () => this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key })));
      return { size: res.ContentLength ?? 0, contentType: res.ContentType ?? DEFAULT_CONTENT_TYPE };
    } catch (err) {
      if (isMissingObject(err)) return null;
      throw err;
    }
  }

  async delete(key: string): Promise<void> {
    const Key = this.fullKey(key);
    try {
      await this.send('delete', () => this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key })));
    } catch (err) {
      if (!isMissingObject(err)) throw err;
    }
  }

  async signedUrl(key: string, options: SignedUrlOptions): Promise<SignedUrl> {
    const Key = this.fullKey(key);
    assertValidExpiry(options.expiresInSeconds);
    const command = new GetObjectCommand({
      Bucket: this.bucket,
      Key,
      ResponseContentDisposition: options.downloadName === undefined ? undefined : attachmentDisposition(options.downloadName),
    });
    const signingDate = this.now();
    const url = await this.send('presign', () => getSignedUrl(this.client, command, { expiresIn: options.expiresInSeconds, signingDate }));
    return { url, expires_at: new Date(Math.floor(signingDate.getTime() / 1000) * 1000 + options.expiresInSeconds * 1000).toISOString() };
  }

  async check(): Promise<StoreHealth> {
    try {
      await this.send('bucket check', () => this.client.send(new HeadBucketCommand({ Bucket: this.bucket })));
      return { ok: true };
    } catch (err) {
      return { ok: false, reason: err instanceof StorageUnavailableError ? err.detail : `s3 store: bucket check failed (${(err as Error).name})` };
    }
  }

  close(): Promise<void> {
    this.client.destroy();
    return Promise.resolve();
  }
}
