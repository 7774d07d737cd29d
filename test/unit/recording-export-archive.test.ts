import { mkdtempSync, readdirSync, rmSync, existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Readable } from 'node:stream';
import JSZip from 'jszip';
import { LocalObjectStore, UrlSigner, type ObjectStore } from '../../src/lib/object-store';
import { writeExportArchive } from '../../src/modules/recording-exports/recording-export.archive';
import type { ExportRecordingRow } from '../../src/modules/recording-exports/recording-export.repository';
import { sha256Hex, tinyWav } from '../helpers/recordings';

const signer = new UrlSigner({ secret: 'unit-test-encryption-key', publicBaseUrl: 'http://127.0.0.1:8080' });
const at = new Date('2026-11-24T10:00:00Z');

function row(n: number, o: Partial<ExportRecordingRow> = {}): ExportRecordingRow {
  return {
    id: `00000000-0000-4000-8000-00000000000${n}`,
    call_uuid: `call-${n}`,
    started_at: new Date(at.getTime() - n * 60_000),
    phone_number: `+1212555010${n}`,
    account_ref: `acc-${n}`,
    agent_name: null,
    campaign_id: null,
    duration_secs: 12,
    disposition: 'answered_human',
    two_party_consent_state: null,
    legal_hold: false,
    sha256: null,
    storage_key: `rec/${n}.wav`,
    audio_purged_at: null,
    ...o,
  };
}

async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

describe('writeExportArchive', () => {
  let dir: string;
  let store: LocalObjectStore;

  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'export-archive-'));
    store = new LocalObjectStore({ baseDir: dir, signer });
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const tmpEntries = () => (existsSync(path.join(dir, '.tmp')) ? readdirSync(path.join(dir, '.tmp')) : []);

  it('streams every kept audio and the manifest, and reports the archive size and SHA-256', async () => {
    const wavs = [tinyWav(1, 5000), tinyWav(2, 7000)];
    await store.put('rec/1.wav', wavs[0]!, { contentType: 'audio/wav' });
    await store.put('rec/2.wav', wavs[1]!, { contentType: 'audio/wav' });
    let beats = 0;
    const rows = [row(1), row(2), row(3, { audio_purged_at: at }), row(4), row(5, { storage_key: null })];
    const result = await writeExportArchive(store, 'exports/t/job.zip', rows, at, () => {
      beats += 1;
      return Promise.resolve();
    });
    const stored = await readAll((await store.get('exports/t/job.zip')).body);
    expect(result).toEqual({ sizeBytes: stored.length, sha256: sha256Hex(stored), audioIncluded: 2 });
    expect(beats).toBe(rows.length);
    const zip = await JSZip.loadAsync(stored);
    expect(Object.keys(zip.files)).toEqual(['recordings/call-1.wav', 'recordings/call-2.wav', 'manifest.csv']);
    expect(Buffer.from(await zip.file('recordings/call-2.wav')!.async('uint8array')).equals(wavs[1]!)).toBe(true);
    const lines = (await zip.file('manifest.csv')!.async('string')).trimEnd().split('\r\n');
    // Purged (3), missing from the store (4) and never stored (5) are listed without audio.
    expect(lines.slice(1).map((l) => l.split(',').slice(-1)[0])).toEqual(['true', 'true', 'false', 'false', 'false']);
    expect(lines[1]!.split(',')[3]).toBe('+12125550101');
  });

  it('abandons the upload (nothing stored, no temp left) when progress throws', async () => {
    await store.put('rec/1.wav', tinyWav(1), { contentType: 'audio/wav' });
    await expect(
      writeExportArchive(store, 'exports/t/job.zip', [row(1), row(2)], at, () => Promise.reject(new Error('claim lost'))),
    ).rejects.toThrow('claim lost');
    expect(await store.head('exports/t/job.zip')).toBeNull();
    expect(tmpEntries()).toEqual([]);
  });

  it('fails instead of hanging when the store stops taking the archive mid-stream', async () => {
    await store.put('rec/1.wav', tinyWav(1, 200_000), { contentType: 'audio/wav' });
    const failing: ObjectStore = Object.assign(Object.create(store) as ObjectStore, {
      async put(_key: string, body: Buffer | Readable) {
        for await (const chunk of body as Readable) {
          if ((chunk as Buffer).length > 0) throw new Error('store went away');
        }
      },
    });
    await expect(writeExportArchive(failing, 'exports/t/job.zip', [row(1)], at, () => Promise.resolve())).rejects.toThrow('store went away');
  });
});
