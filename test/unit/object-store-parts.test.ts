import { Readable } from 'node:stream';
import { DEFAULT_PART_SIZE, partSizeFor, partsOf } from '../../src/lib/object-store/parts';

const MiB = 1024 * 1024;

async function collect(source: Readable, sizeFor: (n: number) => number): Promise<Buffer[]> {
  const parts: Buffer[] = [];
  for await (const part of partsOf(source, sizeFor)) parts.push(part);
  return parts;
}

describe('multipart part sizes', () => {
  it('uses 8 MiB for the first 1,000 parts, then doubles every 1,000 up to 256 MiB', () => {
    expect(DEFAULT_PART_SIZE).toBe(8 * MiB);
    expect([1, 1000, 1001, 2000, 2001, 5001, 10_000].map((n) => partSizeFor(n) / MiB)).toEqual([8, 8, 16, 16, 32, 256, 256]);
  });

  it('lets a 10,000-part upload exceed a terabyte, well past a flat 8 MiB (78 GiB)', () => {
    let total = 0;
    for (let n = 1; n <= 10_000; n += 1) total += partSizeFor(n);
    expect(total).toBeGreaterThan(1024 * 1024 * MiB);
  });
});

describe('partsOf', () => {
  it('cuts parts of exactly the requested size whatever the chunking, the last one shorter', async () => {
    const chunks = [Buffer.from('abc'), Buffer.from('defghij'), Buffer.from('k'), Buffer.from('lmnopqrstu')];
    const parts = await collect(Readable.from(chunks), () => 4);
    expect(parts.map((p) => p.toString())).toEqual(['abcd', 'efgh', 'ijkl', 'mnop', 'qrst', 'u']);
  });

  it('follows a size that changes with the part number', async () => {
    const parts = await collect(Readable.from([Buffer.from('0123456789abcdef')]), (n) => (n === 1 ? 2 : 5));
    expect(parts.map((p) => p.toString())).toEqual(['01', '23456', '789ab', 'cdef']);
  });

  it('yields no part for an empty stream and no empty trailing part for an exact multiple', async () => {
    expect(await collect(Readable.from([]), () => 4)).toEqual([]);
    expect((await collect(Readable.from([Buffer.from('abcdefgh')]), () => 4)).map((p) => p.toString())).toEqual(['abcd', 'efgh']);
  });

  it('reads the source only as far as the consumer has taken parts', async () => {
    let pulled = 0;
    function* source() {
      for (let i = 0; i < 100; i += 1) {
        pulled += 1;
        yield Buffer.alloc(1024, i);
      }
    }
    const parts = partsOf(Readable.from(source(), { highWaterMark: 1 }), () => 4096);
    await parts.next();
    expect(pulled).toBeLessThan(10);
    await parts.return(undefined);
  });
});
