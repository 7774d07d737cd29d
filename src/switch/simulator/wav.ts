/** Minimal RIFF/WAVE (PCM) writer and header reader for the simulator's call recordings. */

export interface WavOptions {
  sampleRate?: number;
  /** Length of the audio in milliseconds. */
  durationMs: number;
  /** Frequency of the tone; 0 writes silence. */
  toneHz?: number;
  /** Peak amplitude from 0 to 1. */
  amplitude?: number;
}

/** 16-bit signed little-endian PCM, mono. */
export function wavBuffer({ sampleRate = 8000, durationMs, toneHz = 440, amplitude = 0.1 }: WavOptions): Buffer {
  const samples = Math.max(0, Math.round((sampleRate * durationMs) / 1000));
  const dataBytes = samples * 2;
  const buf = Buffer.alloc(44 + dataBytes);
  buf.write('RIFF', 0, 'ascii');
  buf.writeUInt32LE(36 + dataBytes, 4);
  buf.write('WAVE', 8, 'ascii');
  buf.write('fmt ', 12, 'ascii');
  buf.writeUInt32LE(16, 16); // fmt chunk size
  buf.writeUInt16LE(1, 20); // PCM
  buf.writeUInt16LE(1, 22); // mono
  buf.writeUInt32LE(sampleRate, 24);
  buf.writeUInt32LE(sampleRate * 2, 28); // byte rate
  buf.writeUInt16LE(2, 32); // block align
  buf.writeUInt16LE(16, 34); // bits per sample
  buf.write('data', 36, 'ascii');
  buf.writeUInt32LE(dataBytes, 40);
  const peak = Math.round(32767 * Math.min(1, Math.max(0, amplitude)));
  for (let i = 0; i < samples; i++) {
    const v = toneHz > 0 ? Math.round(peak * Math.sin((2 * Math.PI * toneHz * i) / sampleRate)) : 0;
    buf.writeInt16LE(v, 44 + i * 2);
  }
  return buf;
}

export interface WavInfo {
  format: number;
  channels: number;
  sampleRate: number;
  byteRate: number;
  bitsPerSample: number;
  dataBytes: number;
  durationMs: number;
}

/** Reads the canonical 44-byte header; throws when the buffer is not a PCM WAV file. */
export function readWavHeader(buf: Buffer): WavInfo {
  if (buf.length < 44) throw new Error('too short for a WAV header');
  if (buf.toString('ascii', 0, 4) !== 'RIFF' || buf.toString('ascii', 8, 12) !== 'WAVE') throw new Error('not RIFF/WAVE');
  if (buf.toString('ascii', 12, 16) !== 'fmt ' || buf.toString('ascii', 36, 40) !== 'data') throw new Error('unexpected chunk layout');
  if (buf.readUInt32LE(4) !== buf.length - 8) throw new Error('RIFF size does not match the file');
  const info = {
    format: buf.readUInt16LE(20),
    channels: buf.readUInt16LE(22),
    sampleRate: buf.readUInt32LE(24),
    byteRate: buf.readUInt32LE(28),
    bitsPerSample: buf.readUInt16LE(34),
    dataBytes: buf.readUInt32LE(40),
  };
  if (info.dataBytes !== buf.length - 44) throw new Error('data size does not match the file');
  return { ...info, durationMs: (info.dataBytes / info.byteRate) * 1000 };
}
