/**
 * The speech sidecar's framing (src/speech/engine/speech_server.py), both directions: an 8-byte
 * header (two big-endian uint32: JSON length, binary length), the JSON object, then the binary
 * payload (16-bit little-endian mono PCM, or nothing).
 */

export const MAX_JSON_BYTES = 16 * 1024 * 1024;
export const MAX_BINARY_BYTES = 64 * 1024 * 1024;

export interface Frame {
  header: Record<string, unknown>;
  payload: Buffer;
}

export function encodeFrame(header: Record<string, unknown>, payload: Buffer = Buffer.alloc(0)): Buffer {
  const json = Buffer.from(JSON.stringify(header), 'utf8');
  const prefix = Buffer.alloc(8);
  prefix.writeUInt32BE(json.length, 0);
  prefix.writeUInt32BE(payload.length, 4);
  return Buffer.concat([prefix, json, payload]);
}

/** Reassembles frames from a byte stream cut anywhere (pipes deliver arbitrary chunks). */
export class FrameReader {
  private pending: Buffer[] = [];
  private pendingBytes = 0;

  /** Returns every frame completed by this chunk; throws on a header no sidecar would write. */
  push(chunk: Buffer): Frame[] {
    this.pending.push(chunk);
    this.pendingBytes += chunk.length;
    const frames: Frame[] = [];
    while (this.pendingBytes >= 8) {
      const buf = this.pending.length === 1 ? this.pending[0]! : Buffer.concat(this.pending);
      this.pending = [buf];
      const jsonLength = buf.readUInt32BE(0);
      const binaryLength = buf.readUInt32BE(4);
      if (jsonLength === 0 || jsonLength > MAX_JSON_BYTES || binaryLength > MAX_BINARY_BYTES) {
        throw new Error(`speech engine framing broken (json ${jsonLength} bytes, binary ${binaryLength} bytes)`);
      }
      const total = 8 + jsonLength + binaryLength;
      if (buf.length < total) break;
      const header = JSON.parse(buf.toString('utf8', 8, 8 + jsonLength)) as unknown;
      if (header === null || typeof header !== 'object' || Array.isArray(header)) throw new Error('speech engine frame header is not an object');
      frames.push({ header: header as Record<string, unknown>, payload: Buffer.from(buf.subarray(8 + jsonLength, total)) });
      const rest = buf.subarray(total);
      this.pending = rest.length ? [rest] : [];
      this.pendingBytes = rest.length;
    }
    return frames;
  }
}
