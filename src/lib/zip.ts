import { ZipFile } from 'yazl';

export interface ZipEntry {
  name: string;
  data: Buffer;
}

/**
 * A ZIP archive built in memory with yazl. Evidence artifacts need the whole body before the
 * response starts (its SHA-256 travels in a header); every entry carries the same timestamp so
 * the same entries give the same bytes.
 */
export function buildZip(entries: ZipEntry[], at: Date): Promise<Buffer> {
  const zip = new ZipFile();
  for (const entry of entries) zip.addBuffer(entry.data, entry.name, { mtime: at, compress: true });
  zip.end();
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    zip.outputStream.on('data', (chunk: Buffer) => chunks.push(chunk));
    zip.outputStream.on('error', reject);
    zip.outputStream.on('end', () => resolve(Buffer.concat(chunks)));
  });
}
