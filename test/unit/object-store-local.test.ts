import { existsSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { createObjectStore, ensureStoreAvailable, LocalObjectStore, ObjectNotFoundError, StorageUnavailableError, UrlSigner } from '../../src/lib/object-store';

const MiB = 1024 * 1024;
const signer = new UrlSigner({ secret: 'unit-test-encryption-key', publicBaseUrl: 'http://127.0.0.1:8080' });

async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

describe('LocalObjectStore', () => {
  let dir: string;
  let store: LocalObjectStore;

  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'object-store-'));
    store = new LocalObjectStore({ baseDir: dir, signer });
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const tmpEntries = () => (existsSync(path.join(dir, '.tmp')) ? readdirSync(path.join(dir, '.tmp')) : []);

  it('puts a buffer and gets it back with its size and content type', async () => {
    await store.put('tenants/t1/rec-1.wav', Buffer.from('RIFF-audio'), { contentType: 'audio/wav' });
    const object = await store.get('tenants/t1/rec-1.wav');
    expect({ size: object.size, contentType: object.contentType }).toEqual({ size: 10, contentType: 'audio/wav' });
    expect((await readAll(object.body)).toString()).toBe('RIFF-audio');
    expect(statSync(path.join(dir, 'tenants/t1/rec-1.wav')).size).toBe(10);
  });

  it('heads an object, and answers null for a missing one', async () => {
    await store.put('a/b.csv', Buffer.from('x,y\n'), { contentType: 'text/csv; charset=utf-8' });
    expect(await store.head('a/b.csv')).toEqual({ size: 4, contentType: 'text/csv; charset=utf-8' });
    expect(await store.head('a/missing.csv')).toBeNull();
    expect(await store.head('a')).toBeNull();
    expect(await store.head('a/b.csv/deeper')).toBeNull();
  });

  it('get of a missing object is an ObjectNotFoundError naming the key', async () => {
    await expect(store.get('nope/x.wav')).rejects.toThrow(ObjectNotFoundError);
    await store.put('dir/x.wav', Buffer.from('1'), { contentType: 'audio/wav' });
    await expect(store.get('dir')).rejects.toMatchObject({ name: 'ObjectNotFoundError', key: 'dir' });
  });

  it('replaces an object on a second put', async () => {
    await store.put('k.bin', Buffer.from('first version'), { contentType: 'application/octet-stream' });
    await store.put('k.bin', Buffer.from('second'), { contentType: 'text/plain' });
    const object = await store.get('k.bin');
    expect({ size: object.size, type: object.contentType, body: (await readAll(object.body)).toString() }).toEqual({ size: 6, type: 'text/plain', body: 'second' });
  });

  it('deletes idempotently, metadata included', async () => {
    await store.put('d/one.wav', Buffer.from('1'), { contentType: 'audio/wav' });
    await store.delete('d/one.wav');
    expect(await store.head('d/one.wav')).toBeNull();
    await expect(store.delete('d/one.wav')).resolves.toBeUndefined();
    await expect(store.delete('never/was.wav')).resolves.toBeUndefined();
    expect(existsSync(path.join(dir, '.meta/d/one.wav.json'))).toBe(false);
  });

  it('streams a Readable put to disk with bounded memory: never more than a few MiB read ahead of the file', async () => {
    const chunks = 40;
    let maxAhead = 0;
    let produced = 0;
    // The object's temp file is the only entry in .tmp until the body is complete.
    const tmpFile = () => tmpEntries().map((f) => path.join(dir, '.tmp', f))[0];
    function* source() {
      for (let i = 0; i < chunks; i += 1) {
        if (i > 0) {
          const file = tmpFile();
          const written = file === undefined ? 0 : statSync(file).size;
          maxAhead = Math.max(maxAhead, produced - written);
        }
        produced += MiB;
        yield Buffer.alloc(MiB, i);
      }
    }
    await store.put('exports/big.zip', Readable.from(source()), { contentType: 'application/zip' });
    expect((await store.head('exports/big.zip'))?.size).toBe(chunks * MiB);
    expect(maxAhead).toBeLessThanOrEqual(4 * MiB);
    const body = await readAll((await store.get('exports/big.zip')).body);
    expect([body[0], body[MiB * 17], body[body.length - 1]]).toEqual([0, 17, chunks - 1]);
  });

  it('is atomic: while a put streams, readers see the previous object whole, and a failed put leaves it intact', async () => {
    await store.put('rec.wav', Buffer.from('old audio'), { contentType: 'audio/wav' });
    const seenDuringWrite: string[] = [];
    async function* replacing() {
      yield Buffer.from('new audio, first half;');
      seenDuringWrite.push((await readAll((await store.get('rec.wav')).body)).toString());
      seenDuringWrite.push(String((await store.head('rec.wav'))?.size));
      yield Buffer.from(' second half');
    }
    await store.put('rec.wav', Readable.from(replacing()), { contentType: 'audio/wav' });
    expect(seenDuringWrite).toEqual(['old audio', '9']);
    expect((await readAll((await store.get('rec.wav')).body)).toString()).toBe('new audio, first half; second half');

    function* failing() {
      yield Buffer.from('partial');
      throw new Error('source broke');
    }
    await expect(store.put('rec.wav', Readable.from(failing()), { contentType: 'audio/wav' })).rejects.toThrow('source broke');
    expect((await readAll((await store.get('rec.wav')).body)).toString()).toBe('new audio, first half; second half');
    await expect(store.put('fresh.wav', Readable.from(failing()), { contentType: 'audio/wav' })).rejects.toThrow('source broke');
    expect(await store.head('fresh.wav')).toBeNull();
    expect(tmpEntries()).toEqual([]);
  });

  it('keeps streaming the version it opened when a put replaces it mid-read', async () => {
    await store.put('v.bin', Buffer.alloc(MiB, 1), { contentType: 'application/octet-stream' });
    const reading = await store.get('v.bin');
    await store.put('v.bin', Buffer.from('short'), { contentType: 'application/octet-stream' });
    const body = await readAll(reading.body);
    expect({ declared: reading.size, got: body.length, first: body[0] }).toEqual({ declared: MiB, got: MiB, first: 1 });
  });

  it.each([
    ['empty', ''],
    ['leading slash', '/etc/passwd'],
    ['parent segment', 'a/../b'],
    ['double dot inside', 'a..b'],
    ['current segment', './a'],
    ['hidden segment (the store own folders)', '.tmp/x'],
    ['empty segment', 'a//b'],
    ['trailing slash', 'a/'],
    ['backslash', 'a\\b'],
    ['space', 'a b.wav'],
    ['percent', 'a%2e%2e'],
    ['newline', 'a\nb'],
    ['non-ascii', 'grabación.wav'],
    ['too long', 'a'.repeat(1025)],
  ])('refuses a bad key (%s) with a TypeError on every operation', async (_label, key) => {
    await expect(store.put(key, Buffer.from('x'), { contentType: 'text/plain' })).rejects.toThrow(TypeError);
    await expect(store.get(key)).rejects.toThrow(TypeError);
    await expect(store.head(key)).rejects.toThrow(TypeError);
    await expect(store.delete(key)).rejects.toThrow(TypeError);
    await expect(store.signedUrl(key, { expiresInSeconds: 60 })).rejects.toThrow(TypeError);
  });

  it('refuses a content type that is not a media type (header injection)', async () => {
    await expect(store.put('x.wav', Buffer.from('x'), { contentType: 'audio/wav\r\nSet-Cookie: a=b' })).rejects.toThrow(TypeError);
    await expect(store.put('x.wav', Buffer.from('x'), { contentType: 'wav' })).rejects.toThrow(TypeError);
    expect(await store.head('x.wav')).toBeNull();
  });

  it('signs URLs to the API /files route with its clock', async () => {
    const fixed = new LocalObjectStore({ baseDir: dir, signer, now: () => new Date('2026-11-24T12:00:00Z') });
    const signed = await fixed.signedUrl('a/b.wav', { expiresInSeconds: 120 });
    expect(signed.expires_at).toBe('2026-11-24T12:02:00.000Z');
    const url = new URL(signed.url);
    expect(url.origin + url.pathname).toBe('http://127.0.0.1:8080/files/a/b.wav');
    expect(signer.verifySignedPath('a/b.wav', url.searchParams.get('expires')!, url.searchParams.get('sig')!, new Date('2026-11-24T12:01:00Z'))).toBe(true);
  });

  it('checks healthy on a writable folder, creating it', async () => {
    const nested = new LocalObjectStore({ baseDir: path.join(dir, 'not', 'yet'), signer });
    expect(await nested.check()).toEqual({ ok: true });
    await expect(ensureStoreAvailable(nested)).resolves.toBeUndefined();
    expect(tmpEntries()).toEqual([]);
  });

  it('reports unavailable when the folder cannot be written, and put is a StorageUnavailableError (503 storage_unavailable)', async () => {
    const blocker = path.join(dir, 'a-file');
    writeFileSync(blocker, 'not a folder');
    const broken = new LocalObjectStore({ baseDir: blocker, signer });
    const health = await broken.check();
    expect(health.ok).toBe(false);
    await expect(ensureStoreAvailable(broken)).rejects.toMatchObject({ name: 'StorageUnavailableError', status: 503, code: 'storage_unavailable' });
    const err = await broken.put('x.wav', Buffer.from('x'), { contentType: 'audio/wav' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StorageUnavailableError);
    expect((err as StorageUnavailableError).toBody()).toEqual({ error: { code: 'storage_unavailable', message: expect.any(String) } });
  });

  it('reports unavailable below the configured free space', async () => {
    const picky = new LocalObjectStore({ baseDir: dir, signer, minFreeBytes: Number.MAX_SAFE_INTEGER });
    expect(await picky.check()).toEqual({ ok: false, reason: expect.stringMatching(/bytes free/) });
  });

  it('createObjectStore builds the local store from a plain options object', async () => {
    const made = createObjectStore({ kind: 'local', baseDir: dir, signer });
    expect(made.kind).toBe('local');
    await made.put('k.txt', Buffer.from('ok'), { contentType: 'text/plain' });
    expect(await store.head('k.txt')).toEqual({ size: 2, contentType: 'text/plain' });
    await made.close();
  });
});
