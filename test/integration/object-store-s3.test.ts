import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { CreateBucketCommand, HeadObjectCommand, ListMultipartUploadsCommand, S3Client } from '@aws-sdk/client-s3';
import { ObjectNotFoundError, S3ObjectStore, StorageUnavailableError } from '../../src/lib/object-store';
import { startS3Server, type S3Server } from '../helpers/s3-server';

const MiB = 1024 * 1024;
const BUCKET = 'recordings';
const REGION = 'us-east-1';
const CREDENTIALS = { accessKeyId: 'test-access-key', secretAccessKey: 'test-secret-key' };

async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** `count` chunks of 1 MiB, each filled with its index, hashed as produced. */
function generated(count: number, failAfter?: number) {
  const hash = createHash('sha256');
  let produced = 0;
  function* chunks() {
    for (let i = 0; i < count; i += 1) {
      if (failAfter !== undefined && i === failAfter) throw new Error('source broke mid-stream');
      const chunk = Buffer.alloc(MiB, i % 251);
      hash.update(chunk);
      produced += chunk.length;
      yield chunk;
    }
  }
  return { stream: Readable.from(chunks()), digest: () => hash.digest('hex'), produced: () => produced };
}

describe('S3ObjectStore against a real S3-compatible server (moto)', () => {
  let server: S3Server;
  let admin: S3Client;
  let store: S3ObjectStore;
  const storeOn = (endpoint: string, bucket = BUCKET) =>
    new S3ObjectStore({ endpoint, region: REGION, bucket, forcePathStyle: true, credentials: CREDENTIALS, keyPrefix: 'it', maxAttempts: 2 });

  beforeAll(async () => {
    server = await startS3Server();
    admin = new S3Client({ endpoint: server.endpoint, region: REGION, forcePathStyle: true, credentials: CREDENTIALS });
    await admin.send(new CreateBucketCommand({ Bucket: BUCKET }));
    store = storeOn(server.endpoint);
  }, 300_000);

  afterAll(async () => {
    await store?.close();
    admin?.destroy();
    await server?.stop();
  });

  it('puts a buffer and gets it back with its size and content type, under the key prefix', async () => {
    await store.put('tenants/t1/rec-1.wav', Buffer.from('RIFF-small-wav'), { contentType: 'audio/wav' });
    const object = await store.get('tenants/t1/rec-1.wav');
    expect({ size: object.size, contentType: object.contentType }).toEqual({ size: 14, contentType: 'audio/wav' });
    expect((await readAll(object.body)).toString()).toBe('RIFF-small-wav');
    const raw = await admin.send(new HeadObjectCommand({ Bucket: BUCKET, Key: 'it/tenants/t1/rec-1.wav' }));
    expect(raw.ContentLength).toBe(14);
  });

  it('streams a Readable over 8 MiB as a multipart upload of 8 MiB parts', async () => {
    const source = generated(19);
    await store.put('exports/big.zip', source.stream, { contentType: 'application/zip' });
    expect(await store.head('exports/big.zip')).toEqual({ size: 19 * MiB, contentType: 'application/zip' });
    const raw = await admin.send(new HeadObjectCommand({ Bucket: BUCKET, Key: 'it/exports/big.zip' }));
    // A multipart object's ETag ends in -<part count>: 8 + 8 + 3 MiB.
    expect(raw.ETag).toMatch(/-3"$/);
    const body = await readAll((await store.get('exports/big.zip')).body);
    expect(createHash('sha256').update(body).digest('hex')).toBe(source.digest());
  });

  it('stores a stream that ends within the first part as a single PutObject', async () => {
    await store.put('exports/small.csv', Readable.from([Buffer.from('id,phone\n'), Buffer.from('1,***1234\n')]), { contentType: 'text/csv' });
    const raw = await admin.send(new HeadObjectCommand({ Bucket: BUCKET, Key: 'it/exports/small.csv' }));
    expect(raw.ETag).not.toContain('-');
    expect((await readAll((await store.get('exports/small.csv')).body)).toString()).toBe('id,phone\n1,***1234\n');
  });

  it('aborts the multipart upload when the source fails mid-stream, leaving no object and no open upload', async () => {
    const source = generated(20, 12);
    await expect(store.put('exports/broken.zip', source.stream, { contentType: 'application/zip' })).rejects.toThrow('source broke mid-stream');
    expect(source.produced()).toBe(12 * MiB);
    expect(await store.head('exports/broken.zip')).toBeNull();
    const uploads = await admin.send(new ListMultipartUploadsCommand({ Bucket: BUCKET }));
    expect(uploads.Uploads ?? []).toEqual([]);
  });

  it('heads a missing object as null and gets it as ObjectNotFoundError', async () => {
    expect(await store.head('tenants/t1/missing.wav')).toBeNull();
    await expect(store.get('tenants/t1/missing.wav')).rejects.toBeInstanceOf(ObjectNotFoundError);
  });

  it('deletes idempotently', async () => {
    await store.put('tenants/t1/gone.wav', Buffer.from('x'), { contentType: 'audio/wav' });
    await store.delete('tenants/t1/gone.wav');
    expect(await store.head('tenants/t1/gone.wav')).toBeNull();
    await expect(store.delete('tenants/t1/gone.wav')).resolves.toBeUndefined();
  });

  it('signs a URL that downloads with fetch, the download name signed in as response-content-disposition', async () => {
    await store.put('tenants/t1/rec-2.wav', Buffer.from('RIFF-presigned'), { contentType: 'audio/wav' });
    const signed = await store.signedUrl('tenants/t1/rec-2.wav', { expiresInSeconds: 120, downloadName: 'call 2.wav' });
    expect(new Date(signed.expires_at).getTime()).toBeGreaterThan(Date.now() + 100_000);
    const res = await fetch(signed.url);
    expect(res.status).toBe(200);
    // moto ignores response-* overrides (AWS applies them), so the override is checked in the URL.
    expect(new URL(signed.url).searchParams.get('response-content-disposition')).toBe(`attachment; filename="call 2.wav"; filename*=UTF-8''call%202.wav`);
    expect(res.headers.get('content-type')).toBe('audio/wav');
    expect(Buffer.from(await res.arrayBuffer()).toString()).toBe('RIFF-presigned');
  });

  it('checks healthy against its bucket, and unavailable against a missing bucket', async () => {
    expect(await store.check()).toEqual({ ok: true });
    const noBucket = storeOn(server.endpoint, 'no-such-bucket');
    expect((await noBucket.check()).ok).toBe(false);
    await expect(noBucket.put('x.wav', Buffer.from('x'), { contentType: 'audio/wav' })).rejects.toBeInstanceOf(StorageUnavailableError);
    await noBucket.close();
  });

  it('turns every operation into StorageUnavailableError (503 storage_unavailable) once the server is down', async () => {
    await server.stop();
    const outcomes = await Promise.all([
      store.put('tenants/t1/late.wav', Buffer.from('x'), { contentType: 'audio/wav' }).catch((e: unknown) => e),
      store.put('tenants/t1/late-stream.wav', Readable.from([Buffer.from('x')]), { contentType: 'audio/wav' }).catch((e: unknown) => e),
      store.get('tenants/t1/rec-1.wav').catch((e: unknown) => e),
      store.head('tenants/t1/rec-1.wav').catch((e: unknown) => e),
      store.delete('tenants/t1/rec-1.wav').catch((e: unknown) => e),
    ]);
    for (const outcome of outcomes) expect(outcome).toMatchObject({ name: 'StorageUnavailableError', status: 503, code: 'storage_unavailable' });
    expect((await store.check()).ok).toBe(false);
  });
});
