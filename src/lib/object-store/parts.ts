import type { Readable } from 'node:stream';

export const DEFAULT_PART_SIZE = 8 * 1024 * 1024;
export const MIN_PART_SIZE = 5 * 1024 * 1024;
const MAX_PART_SIZE = 256 * 1024 * 1024;
const PARTS_PER_STEP = 1000;

/**
 * The size of part `n` (1-based): the base size for the first 1,000 parts, then doubling every
 * 1,000 up to 256 MiB. S3 caps an upload at 10,000 parts, which at a flat 8 MiB is only 78 GiB; a
 * 50,000-recording export can be larger. Growing keeps small archives at 8 MiB of memory and lifts
 * the ceiling to about 1.5 TiB.
 */
export function partSizeFor(partNumber: number, base = DEFAULT_PART_SIZE): number {
  const step = Math.floor((partNumber - 1) / PARTS_PER_STEP);
  return Math.min(MAX_PART_SIZE, base * 2 ** step);
}

/**
 * Splits a stream into parts of exactly `sizeFor(n)` bytes (the last one shorter), holding at most
 * one part plus one incoming chunk in memory; the consumer's awaits are the back-pressure.
 */
export async function* partsOf(source: Readable, sizeFor: (partNumber: number) => number): AsyncGenerator<Buffer> {
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let partNumber = 1;
  for await (const chunk of source) {
    const buf = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as string);
    pending.push(buf);
    pendingBytes += buf.length;
    while (pendingBytes >= sizeFor(partNumber)) {
      const size = sizeFor(partNumber);
      const all = Buffer.concat(pending, pendingBytes);
      yield all.subarray(0, size);
      partNumber += 1;
      const rest = Buffer.from(all.subarray(size));
      pending = rest.length > 0 ? [rest] : [];
      pendingBytes = rest.length;
    }
  }
  if (pendingBytes > 0) yield Buffer.concat(pending, pendingBytes);
}
