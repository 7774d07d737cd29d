/**
 * Linear PCM as the speech path carries it: 16-bit signed little-endian mono samples. A phone leg is
 * 8 kHz (mod_audio_fork may send 16 kHz); the offline recognizer's model is 16 kHz and eSpeak NG
 * speaks at 22,050 Hz, so audio is resampled at each boundary.
 */

export interface Pcm {
  sampleRate: number;
  samples: Int16Array;
}

export function pcmFromBuffer(buf: Buffer, sampleRate: number): Pcm {
  if (buf.length % 2 !== 0) throw new Error('PCM must be whole 16-bit samples');
  const samples = new Int16Array(buf.length / 2);
  for (let i = 0; i < samples.length; i++) samples[i] = buf.readInt16LE(i * 2);
  return { sampleRate, samples };
}

export function pcmToBuffer(samples: Int16Array): Buffer {
  const buf = Buffer.alloc(samples.length * 2);
  for (let i = 0; i < samples.length; i++) buf.writeInt16LE(samples[i]!, i * 2);
  return buf;
}

export function durationMs(pcm: Pcm): number {
  return (pcm.samples.length / pcm.sampleRate) * 1000;
}

export function concatPcm(parts: readonly Int16Array[]): Int16Array {
  const out = new Int16Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

function gcd(a: number, b: number): number {
  return b === 0 ? a : gcd(b, a % b);
}

const clamp16 = (v: number) => (v > 32767 ? 32767 : v < -32768 ? -32768 : Math.round(v));

interface Filter {
  /** Per output phase, the taps for input offsets -width+1 … width. */
  phases: Float64Array[];
  width: number;
}

/** Designed filters by ratio: a deployment uses two or three ratios all day. */
const FILTERS = new Map<string, Filter>();

function besselI0(x: number): number {
  let sum = 1;
  let term = 1;
  for (let k = 1; k < 30; k++) {
    term *= (x / (2 * k)) ** 2;
    sum += term;
  }
  return sum;
}

function designFilter(up: number, down: number): Filter {
  // Of the input's Nyquist frequency, leaving room for the transition band below the output's.
  const cutoff = Math.min(1, up / down) * 0.94;
  const width = Math.ceil(16 / cutoff);
  const beta = 8.6;
  const i0beta = besselI0(beta);
  const phases: Float64Array[] = [];
  for (let p = 0; p < up; p++) {
    const frac = ((p * down) % up) / up;
    const taps = new Float64Array(2 * width);
    let sum = 0;
    for (let k = 0; k < 2 * width; k++) {
      const t = k - width + 1 - frac;
      const x = t * cutoff;
      const sinc = x === 0 ? 1 : Math.sin(Math.PI * x) / (Math.PI * x);
      const r = t / width;
      taps[k] = Math.abs(r) >= 1 ? 0 : (sinc * besselI0(beta * Math.sqrt(1 - r * r))) / i0beta;
      sum += taps[k]!;
    }
    for (let k = 0; k < taps.length; k++) taps[k]! /= sum;
    phases.push(taps);
  }
  return { phases, width };
}

function filterFor(from: number, to: number): Filter & { up: number; down: number } {
  if (!Number.isInteger(from) || from <= 0 || !Number.isInteger(to) || to <= 0) throw new Error(`invalid sample rates ${from} → ${to}`);
  const g = gcd(from, to);
  const up = to / g;
  const down = from / g;
  const key = `${up}/${down}`;
  let filter = FILTERS.get(key);
  if (!filter) {
    filter = designFilter(up, down);
    FILTERS.set(key, filter);
  }
  return { ...filter, up, down };
}

/**
 * Band-limited resampling of a stream: a Kaiser-windowed sinc low-pass at the lower of the two
 * Nyquist frequencies, evaluated at each output instant (polyphase: the ratio is reduced by the gcd,
 * so 22,050 → 8,000 Hz uses 160 phases). Plain interpolation would fold the 4–11 kHz of synthesized
 * speech back into the telephone band as noise. Frames pushed one by one come out exactly as the
 * whole signal resampled at once: the filter's history is kept across pushes.
 */
export class StreamResampler {
  private readonly filter: Filter & { up: number; down: number };
  private buf: Int16Array = new Int16Array(0);
  /** Absolute input index of buf[0]. */
  private bufStart = 0;
  private inputLength = 0;
  private nextOut = 0;

  constructor(
    readonly fromRate: number,
    readonly toRate: number,
  ) {
    this.filter = filterFor(fromRate, toRate);
  }

  push(chunk: Int16Array): Int16Array {
    if (this.fromRate === this.toRate) return chunk;
    this.buf = concatPcm([this.buf, chunk]);
    this.inputLength += chunk.length;
    return this.produce(false);
  }

  /** The outputs that still wait for future input, computed as if the input ended here. */
  flush(): Int16Array {
    if (this.fromRate === this.toRate) return new Int16Array(0);
    return this.produce(true);
  }

  private produce(final: boolean): Int16Array {
    const { phases, width, up, down } = this.filter;
    const limit = final ? Math.floor((this.inputLength * up) / down) : Infinity;
    const out: number[] = [];
    for (let n = this.nextOut; n < limit; n++) {
      const base = Math.floor((n * down) / up);
      if (!final && base + width >= this.inputLength) break;
      const taps = phases[n % up]!;
      const first = base - width + 1 - this.bufStart;
      const lo = Math.max(0, -first);
      const hi = Math.min(taps.length, this.buf.length - first);
      let acc = 0;
      for (let k = lo; k < hi; k++) acc += this.buf[first + k]! * taps[k]!;
      out.push(clamp16(acc));
      this.nextOut = n + 1;
    }
    const keepFrom = Math.max(this.bufStart, Math.floor((this.nextOut * down) / up) - width + 1);
    if (keepFrom > this.bufStart) {
      this.buf = this.buf.slice(keepFrom - this.bufStart);
      this.bufStart = keepFrom;
    }
    return Int16Array.from(out);
  }
}

export function resample(input: Pcm, targetRate: number): Pcm {
  if (input.sampleRate === targetRate) return input;
  const r = new StreamResampler(input.sampleRate, targetRate);
  return { sampleRate: targetRate, samples: concatPcm([r.push(input.samples), r.flush()]) };
}

/** Root-mean-square level in dBFS (full scale = 32768); -Infinity for digital silence. */
export function levelDbfs(samples: Int16Array, start = 0, end = samples.length): number {
  if (end <= start) return -Infinity;
  let sum = 0;
  for (let i = start; i < end; i++) sum += samples[i]! * samples[i]!;
  const rms = Math.sqrt(sum / (end - start));
  return rms === 0 ? -Infinity : 20 * Math.log10(rms / 32768);
}

/**
 * Adds a low, deterministic Gaussian noise floor (seeded xorshift + Box-Muller). PocketSphinx's
 * noise removal and cepstral mean normalization break down on frames of exact digital zeros (the
 * silence synthesized speech and a resampled 8 kHz leg are full of): measured on the bench set, word
 * error rate fell from 61 % to 4 % with a floor about 18 dB under the speech.
 */
export function addNoiseFloor(samples: Int16Array, rms: number, seed = 0x2545f491): Int16Array {
  if (rms <= 0) return samples;
  let state = seed >>> 0 || 1;
  const next = () => {
    state ^= state << 13;
    state >>>= 0;
    state ^= state >>> 17;
    state ^= state << 5;
    state >>>= 0;
    return (state + 1) / 4294967297;
  };
  const out = new Int16Array(samples.length);
  for (let i = 0; i < samples.length; i++) {
    const gauss = Math.sqrt(-2 * Math.log(next())) * Math.cos(2 * Math.PI * next());
    out[i] = clamp16(samples[i]! + gauss * rms);
  }
  return out;
}

export function silence(sampleRate: number, ms: number): Int16Array {
  return new Int16Array(Math.round((sampleRate * ms) / 1000));
}

/** A canonical 44-byte-header RIFF/WAVE file around 16-bit mono PCM. */
export function pcmToWav(pcm: Pcm): Buffer {
  const data = pcmToBuffer(pcm.samples);
  const header = Buffer.alloc(44);
  header.write('RIFF', 0, 'ascii');
  header.writeUInt32LE(36 + data.length, 4);
  header.write('WAVE', 8, 'ascii');
  header.write('fmt ', 12, 'ascii');
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20);
  header.writeUInt16LE(1, 22);
  header.writeUInt32LE(pcm.sampleRate, 24);
  header.writeUInt32LE(pcm.sampleRate * 2, 28);
  header.writeUInt16LE(2, 32);
  header.writeUInt16LE(16, 34);
  header.write('data', 36, 'ascii');
  header.writeUInt32LE(data.length, 40);
  return Buffer.concat([header, data]);
}

/**
 * Reads a PCM WAV file chunk by chunk (providers add LIST or fact chunks before the data): 16-bit
 * mono, or stereo mixed down. Anything else (compressed formats, 8/24-bit) throws.
 */
export function wavToPcm(buf: Buffer): Pcm {
  if (buf.length < 12 || buf.toString('ascii', 0, 4) !== 'RIFF' || buf.toString('ascii', 8, 12) !== 'WAVE') throw new Error('not a RIFF/WAVE file');
  let at = 12;
  let format: { channels: number; sampleRate: number; bits: number; tag: number } | null = null;
  while (at + 8 <= buf.length) {
    const id = buf.toString('ascii', at, at + 4);
    const size = buf.readUInt32LE(at + 4);
    const body = at + 8;
    if (id === 'fmt ') {
      if (size < 16 || body + 16 > buf.length) throw new Error('truncated fmt chunk');
      format = { tag: buf.readUInt16LE(body), channels: buf.readUInt16LE(body + 2), sampleRate: buf.readUInt32LE(body + 4), bits: buf.readUInt16LE(body + 14) };
    } else if (id === 'data') {
      if (!format) throw new Error('data chunk before fmt chunk');
      // 0xFFFE is WAVE_FORMAT_EXTENSIBLE, whose PCM subtype is the common case for 16-bit files too.
      if ((format.tag !== 1 && format.tag !== 0xfffe) || format.bits !== 16) throw new Error(`unsupported WAV format ${format.tag}/${format.bits}-bit`);
      if (format.channels < 1 || format.channels > 2) throw new Error(`unsupported channel count ${format.channels}`);
      // Streaming writers leave the size at 0 or 0xFFFFFFFF: the data then runs to the end.
      const end = size === 0 || size === 0xffffffff ? buf.length : Math.min(buf.length, body + size);
      const frames = Math.floor((end - body) / (2 * format.channels));
      const samples = new Int16Array(frames);
      for (let i = 0; i < frames; i++) {
        const off = body + i * 2 * format.channels;
        samples[i] = format.channels === 1 ? buf.readInt16LE(off) : Math.round((buf.readInt16LE(off) + buf.readInt16LE(off + 2)) / 2);
      }
      return { sampleRate: format.sampleRate, samples };
    }
    at = body + size + (size % 2);
  }
  throw new Error('no data chunk');
}
