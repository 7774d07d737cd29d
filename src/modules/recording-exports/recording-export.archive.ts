import { createHash } from 'node:crypto';
import { Transform, type Readable, type TransformCallback } from 'node:stream';
import { finished } from 'node:stream/promises';
import { ZipFile } from 'yazl';
import { ObjectNotFoundError, type ObjectStore } from '../../lib/object-store';
import { E164_RE } from '../../lib/phone';
import { csvField, csvLine } from '../compliance-reports/artifact';
import type { ExportRecordingRow } from './recording-export.repository';

export const MANIFEST_COLUMNS = [
  'recording_id',
  'call_id',
  'started_at',
  'phone_number',
  'account_ref',
  'agent',
  'campaign_id',
  'duration_secs',
  'disposition',
  'two_party_consent_state',
  'legal_hold',
  'sha256',
  'audio_included',
] as const;

/** The archive entry of a recording's audio; call uuids are not trusted as path segments. */
export function audioEntryName(row: Pick<ExportRecordingRow, 'call_uuid'>): string {
  return `recordings/${row.call_uuid.replace(/[^A-Za-z0-9._-]/g, '_')}.wav`;
}

/**
 * csvField, except that an E.164 number keeps its leading +: it is only digits, so it cannot carry
 * a formula, and an apostrophe would corrupt the number for every program reading the manifest.
 */
const manifestCell = (value: string | number | null): string => (typeof value === 'string' && E164_RE.test(value) ? value : csvField(value));

function manifestLine(row: ExportRecordingRow, audioIncluded: boolean): string {
  const cells = [
    row.id,
    row.call_uuid,
    row.started_at.toISOString(),
    row.phone_number,
    row.account_ref,
    row.agent_name,
    row.campaign_id,
    row.duration_secs,
    row.disposition,
    row.two_party_consent_state,
    String(row.legal_hold),
    row.sha256,
    String(audioIncluded),
  ];
  return `${cells.map(manifestCell).join(',')}\r\n`;
}

/** Counts and hashes the archive bytes on their way to the store. */
class Digest extends Transform {
  readonly hash = createHash('sha256');
  bytes = 0;

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    this.hash.update(chunk);
    this.bytes += chunk.length;
    done(null, chunk);
  }
}

export interface ArchiveResult {
  sizeBytes: number;
  sha256: string;
  audioIncluded: number;
}

/**
 * Streams the ZIP straight into the store: yazl's output goes through a digest into put() while
 * the audio entries are added one at a time, each opened only when the previous one has been
 * read, so one object handle and a few chunks are in memory whatever the export's size. Audio
 * purged by retention, or missing from the store, is listed with audio_included=false. The
 * manifest comes last because only then is it known which audio made it in. `progress` runs
 * between entries (heartbeats); if it throws, the upload is abandoned and nothing is stored.
 */
export async function writeExportArchive(
  store: ObjectStore,
  key: string,
  rows: ExportRecordingRow[],
  at: Date,
  progress: () => Promise<void>,
): Promise<ArchiveResult> {
  const zip = new ZipFile();
  const digest = new Digest();
  const abandon = (err: unknown) => digest.destroy(err instanceof Error ? err : new Error(String(err)));
  // pipe() forwards data, not errors: a failing entry (a short audio stream) must end the upload too.
  zip.on('error', abandon);
  zip.outputStream.on('error', abandon);
  const upload = store.put(key, zip.outputStream.pipe(digest), { contentType: 'application/zip' });
  // A store that stops reading leaves the current entry unread forever: its failure must end the wait.
  const uploadFailed = upload.then(
    () => new Promise<never>(() => undefined),
    (err: unknown) => Promise.reject(err instanceof Error ? err : new Error(String(err))),
  );
  uploadFailed.catch(() => undefined);
  let manifest = csvLine([...MANIFEST_COLUMNS]);
  let audioIncluded = 0;
  let reading: Readable | null = null;
  try {
    for (const row of rows) {
      let included = false;
      if (row.storage_key !== null && row.audio_purged_at === null) {
        const audio = await store.get(row.storage_key).catch((err: unknown) => {
          if (err instanceof ObjectNotFoundError) return null;
          throw err;
        });
        if (audio) {
          reading = audio.body;
          zip.addReadStream(audio.body, audioEntryName(row), { mtime: at, compress: false, size: audio.size });
          await Promise.race([finished(audio.body), uploadFailed]);
          reading = null;
          included = true;
          audioIncluded += 1;
        }
      }
      manifest += manifestLine(row, included);
      await progress();
    }
    zip.addBuffer(Buffer.from(manifest, 'utf8'), 'manifest.csv', { mtime: at, compress: true });
    zip.end();
    await upload;
  } catch (err) {
    reading?.destroy();
    abandon(err);
    await upload.catch(() => undefined);
    throw err;
  }
  return { sizeBytes: digest.bytes, sha256: digest.hash.digest('hex'), audioIncluded };
}
