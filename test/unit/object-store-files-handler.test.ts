import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Hono } from 'hono';
import { filesHandler, LocalObjectStore, StorageUnavailableError, UrlSigner, type ObjectStore } from '../../src/lib/object-store';

const NOW = new Date('2026-11-24T12:00:00.000Z');
const signer = new UrlSigner({ secret: 'unit-test-encryption-key', publicBaseUrl: 'http://127.0.0.1:8080' });

function appFor(store: ObjectStore, now = NOW) {
  const app = new Hono();
  app.get('/files/*', filesHandler(store, signer, { now: () => now }));
  return app;
}

const codeOf = async (res: Response) => ((await res.json()) as { error: { code: string } }).error.code;

/** The path and query of a signed URL, as app.request() takes them. */
const local = (url: string) => {
  const u = new URL(url);
  return `${u.pathname}${u.search}`;
};

describe('filesHandler', () => {
  let dir: string;
  let store: LocalObjectStore;
  let app: Hono;

  beforeEach(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'files-handler-'));
    store = new LocalObjectStore({ baseDir: dir, signer, now: () => NOW });
    await store.put('tenants/t1/rec-1.wav', Buffer.from('RIFF....WAVEfmt '), { contentType: 'audio/wav' });
    app = appFor(store);
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('streams the object with Content-Type, Content-Length and an attachment Content-Disposition named after the key', async () => {
    const { url } = await store.signedUrl('tenants/t1/rec-1.wav', { expiresInSeconds: 60 });
    const res = await app.request(local(url));
    expect(res.status).toBe(200);
    expect({
      type: res.headers.get('content-type'),
      length: res.headers.get('content-length'),
      disposition: res.headers.get('content-disposition'),
      cache: res.headers.get('cache-control'),
      sniff: res.headers.get('x-content-type-options'),
    }).toEqual({
      type: 'audio/wav',
      length: '16',
      disposition: `attachment; filename="rec-1.wav"; filename*=UTF-8''rec-1.wav`,
      cache: 'private, no-store',
      sniff: 'nosniff',
    });
    expect(Buffer.from(await res.arrayBuffer()).toString()).toBe('RIFF....WAVEfmt ');
  });

  it('uses the signed download name, non-ASCII included', async () => {
    const { url } = await store.signedUrl('tenants/t1/rec-1.wav', { expiresInSeconds: 60, downloadName: 'llamada José 1.wav' });
    const res = await app.request(local(url));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-disposition')).toBe(`attachment; filename="llamada Jos_ 1.wav"; filename*=UTF-8''llamada%20Jos%C3%A9%201.wav`);
  });

  it('answers 403 forbidden to an expired link', async () => {
    const { url } = await store.signedUrl('tenants/t1/rec-1.wav', { expiresInSeconds: 60 });
    const res = await appFor(store, new Date(NOW.getTime() + 61_000)).request(local(url));
    expect(res.status).toBe(403);
    expect(await res.json()).toEqual({ error: { code: 'forbidden', message: expect.any(String) } });
  });

  it.each([
    ['a tampered key', (u: URL) => (u.pathname = u.pathname.replace('rec-1', 'rec-2'))],
    ['a tampered expiry', (u: URL) => u.searchParams.set('expires', String(Number(u.searchParams.get('expires')) + 1))],
    ['a tampered signature', (u: URL) => u.searchParams.set('sig', 'f'.repeat(64))],
    ['a signature of the wrong length', (u: URL) => u.searchParams.set('sig', u.searchParams.get('sig')!.slice(2))],
    ['a swapped download name', (u: URL) => u.searchParams.set('name', 'other.wav')],
    ['a missing signature', (u: URL) => u.searchParams.delete('sig')],
    ['a missing expiry', (u: URL) => u.searchParams.delete('expires')],
  ])('answers 403 forbidden to %s', async (_label, tamper) => {
    const u = new URL((await store.signedUrl('tenants/t1/rec-1.wav', { expiresInSeconds: 60, downloadName: 'rec.wav' })).url);
    tamper(u);
    const res = await app.request(local(u.toString()));
    expect(res.status).toBe(403);
    expect(await codeOf(res)).toBe('forbidden');
  });

  it('answers 403 to a traversal attempt, never touching the disk', async () => {
    const res = await app.request(`/files/..%2f..%2fetc/passwd?expires=9999999999&sig=${'a'.repeat(64)}`);
    expect(res.status).toBe(403);
  });

  it('answers 404 not_found when a validly signed object is gone (purged)', async () => {
    const { url } = await store.signedUrl('tenants/t1/rec-1.wav', { expiresInSeconds: 60 });
    await store.delete('tenants/t1/rec-1.wav');
    const res = await app.request(local(url));
    expect(res.status).toBe(404);
    expect(await codeOf(res)).toBe('not_found');
  });

  it('answers 503 storage_unavailable when the store cannot serve', async () => {
    const failing: ObjectStore = Object.assign(Object.create(store) as LocalObjectStore, { get: () => Promise.reject(new StorageUnavailableError('disk gone')) });
    const { url } = await store.signedUrl('tenants/t1/rec-1.wav', { expiresInSeconds: 60 });
    const res = await appFor(failing).request(local(url));
    expect(res.status).toBe(503);
    expect(await codeOf(res)).toBe('storage_unavailable');
  });
});
