import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { EgressRefusedError } from '../../src/lib/egress';
import { checkS3Endpoint, createObjectStore, S3ObjectStore, StorageUnavailableError } from '../../src/lib/object-store';

const NOW = new Date('2026-11-24T12:00:00.000Z');
const options = {
  bucket: 'recordings',
  region: 'us-east-1',
  endpoint: 'https://s3.example.com',
  forcePathStyle: true,
  credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY' },
  now: () => NOW,
};

describe('S3ObjectStore without a network', () => {
  it('is built by createObjectStore without contacting the endpoint', async () => {
    const store = createObjectStore({ kind: 's3', ...options, endpoint: 'https://unreachable.invalid' });
    expect(store.kind).toBe('s3');
    await store.close();
  });

  it('presigns a GetObject URL with the expiry, the key prefix and the download name as response-content-disposition', async () => {
    const store = new S3ObjectStore({ ...options, keyPrefix: 'prod' });
    const signed = await store.signedUrl('tenants/t1/rec-1.wav', { expiresInSeconds: 300, downloadName: 'call 1.wav' });
    const url = new URL(signed.url);
    expect(url.origin + url.pathname).toBe('https://s3.example.com/recordings/prod/tenants/t1/rec-1.wav');
    expect({
      expires: url.searchParams.get('X-Amz-Expires'),
      date: url.searchParams.get('X-Amz-Date'),
      disposition: url.searchParams.get('response-content-disposition'),
      signature: /^[0-9a-f]{64}$/.test(url.searchParams.get('X-Amz-Signature') ?? ''),
    }).toEqual({ expires: '300', date: '20261124T120000Z', disposition: `attachment; filename="call 1.wav"; filename*=UTF-8''call%201.wav`, signature: true });
    expect(signed.expires_at).toBe('2026-11-24T12:05:00.000Z');
    expect(signed.url).not.toContain(options.credentials.secretAccessKey);
    await store.close();
  });

  it('refuses bad keys, content types and expiries with a TypeError before any request', async () => {
    const store = new S3ObjectStore(options);
    await expect(store.put('../x', Buffer.from('x'), { contentType: 'audio/wav' })).rejects.toThrow(TypeError);
    await expect(store.put('x.wav', Readable.from([Buffer.from('x')]), { contentType: 'bad\ntype' })).rejects.toThrow(TypeError);
    await expect(store.get('/abs')).rejects.toThrow(TypeError);
    await expect(store.head('a//b')).rejects.toThrow(TypeError);
    await expect(store.delete('')).rejects.toThrow(TypeError);
    await expect(store.signedUrl('x.wav', { expiresInSeconds: 7 * 24 * 3600 + 1 })).rejects.toThrow(TypeError);
    await store.close();
  });

  it('refuses a missing bucket or a malformed key prefix', () => {
    expect(() => new S3ObjectStore({ ...options, bucket: '' })).toThrow(TypeError);
    expect(() => new S3ObjectStore({ ...options, keyPrefix: '/root' })).toThrow(TypeError);
  });
});

describe('S3ObjectStore error classification', () => {
  let server: http.Server;
  let answer: { status: number; code: string };
  let endpoint: string;

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      req.resume();
      res.writeHead(answer.status, { 'content-type': 'application/xml' });
      res.end(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>${answer.code}</Code><Message>scripted</Message></Error>`);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const store = () => new S3ObjectStore({ ...options, endpoint, maxAttempts: 1 });

  it.each([
    [500, 'InternalError'],
    [503, 'SlowDown'],
    [403, 'InvalidAccessKeyId'],
    [403, 'SignatureDoesNotMatch'],
    [400, 'ExpiredToken'],
    [404, 'NoSuchBucket'],
  ])('maps %i %s to StorageUnavailableError', async (status, code) => {
    answer = { status, code };
    const s = store();
    await expect(s.put('x.wav', Buffer.from('x'), { contentType: 'audio/wav' })).rejects.toMatchObject({ name: 'StorageUnavailableError', code: 'storage_unavailable' });
    expect((await s.check()).ok).toBe(false);
    await s.close();
  });

  it('lets a request error that is not the store being unavailable through unchanged', async () => {
    answer = { status: 400, code: 'InvalidArgument' };
    const s = store();
    const err = await s.put('x.wav', Buffer.from('x'), { contentType: 'audio/wav' }).catch((e: unknown) => e);
    expect(err).toMatchObject({ name: 'InvalidArgument' });
    expect(err).not.toBeInstanceOf(StorageUnavailableError);
    await s.close();
  });

  it('checks the connected address again at connect time when given the egress policy', async () => {
    answer = { status: 500, code: 'InternalError' };
    const port = new URL(endpoint).port;
    const rebound = `http://s3.example.com:${port}`;
    const toLoopback = () => Promise.resolve(['127.0.0.1']);
    const refused = new S3ObjectStore({ ...options, endpoint: rebound, maxAttempts: 1, egress: { allowlist: [], resolve: toLoopback } });
    const err = await refused.head('x.wav').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StorageUnavailableError);
    expect((err as StorageUnavailableError).detail).toMatch(/EGRESS_REFUSED/);
    await refused.close();

    answer = { status: 404, code: 'NotFound' };
    const allowed = new S3ObjectStore({ ...options, endpoint: rebound, maxAttempts: 1, egress: { allowlist: [rebound], resolve: toLoopback } });
    expect(await allowed.head('x.wav')).toBeNull();
    await allowed.close();
  });
});

describe('checkS3Endpoint', () => {
  const publicDns = (host: string) => Promise.resolve(host === 's3.example.com' ? ['93.184.216.34'] : ['10.0.0.5']);

  it('accepts AWS itself (no endpoint) and a public https endpoint', async () => {
    await expect(checkS3Endpoint(undefined, { allowlist: [] })).resolves.toBeUndefined();
    await expect(checkS3Endpoint('https://s3.example.com', { allowlist: [], resolve: publicDns })).resolves.toBeUndefined();
  });

  it.each([
    ['plain http', 'http://s3.example.com', 'not_https'],
    ['another port', 'https://s3.example.com:9000', 'not_port_443'],
    ['an IP literal', 'https://10.0.0.5', 'ip_literal'],
    ['a private address', 'https://minio.example.org', 'non_public_address'],
    ['credentials in the URL', 'https://key:secret@s3.example.com', 'credentials_in_url'],
  ])('refuses %s', async (_label, endpoint, reason) => {
    await expect(checkS3Endpoint(endpoint, { allowlist: [], resolve: publicDns })).rejects.toMatchObject({ name: 'EgressRefusedError', reason });
  });

  it('accepts a private endpoint only when its origin is in EGRESS_ALLOWLIST', async () => {
    await expect(checkS3Endpoint('http://127.0.0.1:9000', { allowlist: [] })).rejects.toBeInstanceOf(EgressRefusedError);
    await expect(checkS3Endpoint('http://127.0.0.1:9000', { allowlist: ['http://127.0.0.1:9000'] })).resolves.toBeUndefined();
  });
});
