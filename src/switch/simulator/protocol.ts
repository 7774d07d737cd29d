/**
 * The wire format of FreeSWITCH's event socket (mod_event_socket), server side.
 *
 * Client to server: a command line, optional `Name: value` header lines, a blank line, and when a
 * `Content-Length` header is present that many bytes of body (sendevent). `\r\n` is accepted.
 * Server to client: a header block ending in a blank line (`Content-Type` is one of auth/request,
 * command/reply, api/response, text/event-plain, text/event-json, text/disconnect-notice) followed by
 * `Content-Length` bytes of body when the header is present.
 */

export interface EslCommand {
  /** The first line, e.g. `api status` or `bgapi originate ...`. */
  line: string;
  /** Header lines after the command line (Job-UUID for bgapi, call-command for sendmsg, ...). */
  headers: Record<string, string>;
  body?: string;
}

export class EslFramingError extends Error {
  override name = 'EslFramingError';
}

const MAX_HEADER_BYTES = 64 * 1024;
const MAX_BODY_BYTES = 1024 * 1024;

function findHeaderEnd(buf: Buffer): { at: number; length: number } | null {
  for (let i = 0; i < buf.length - 1; i++) {
    if (buf[i] !== 0x0a) continue;
    if (buf[i + 1] === 0x0a) return { at: i, length: 2 };
    if (buf[i + 1] === 0x0d && buf[i + 2] === 0x0a) return { at: i, length: 3 };
  }
  return null;
}

/** Incremental parser of client commands: feed it TCP chunks of any size, get whole commands. */
export class CommandReader {
  private buf: Buffer = Buffer.alloc(0);
  private pending: { line: string; headers: Record<string, string>; bodyLength: number } | null = null;

  push(chunk: Buffer): EslCommand[] {
    this.buf = this.buf.length === 0 ? chunk : Buffer.concat([this.buf, chunk]);
    const out: EslCommand[] = [];
    for (;;) {
      if (this.pending) {
        if (this.buf.length < this.pending.bodyLength) break;
        const body = this.buf.subarray(0, this.pending.bodyLength).toString('utf8');
        this.buf = this.buf.subarray(this.pending.bodyLength);
        out.push({ line: this.pending.line, headers: this.pending.headers, body });
        this.pending = null;
        continue;
      }
      // Blank lines between commands are ignored, as FreeSWITCH does.
      let skip = 0;
      while (skip < this.buf.length && (this.buf[skip] === 0x0a || this.buf[skip] === 0x0d)) skip++;
      if (skip > 0) this.buf = this.buf.subarray(skip);
      const end = findHeaderEnd(this.buf);
      if (!end) {
        if (this.buf.length > MAX_HEADER_BYTES) throw new EslFramingError('command header block too large');
        break;
      }
      const text = this.buf.subarray(0, end.at).toString('utf8').replace(/\r/g, '');
      this.buf = this.buf.subarray(end.at + end.length);
      const [line = '', ...rest] = text.split('\n');
      const headers: Record<string, string> = {};
      for (const h of rest) {
        const idx = h.indexOf(':');
        if (idx <= 0) continue;
        headers[h.slice(0, idx).trim()] = h.slice(idx + 1).trim();
      }
      const lengthHeader = headers['Content-Length'] ?? headers['content-length'];
      const bodyLength = lengthHeader === undefined ? 0 : Number.parseInt(lengthHeader, 10);
      if (!Number.isFinite(bodyLength) || bodyLength < 0 || bodyLength > MAX_BODY_BYTES) {
        throw new EslFramingError('bad Content-Length');
      }
      if (bodyLength > 0) {
        this.pending = { line: line.trim(), headers, bodyLength };
        continue;
      }
      out.push({ line: line.trim(), headers });
    }
    return out;
  }
}

export const AUTH_REQUEST = 'Content-Type: auth/request\n\n';

const DISCONNECT_TEXT = 'Disconnected, goodbye.\nSee you at ClueCon! http://www.cluecon.com/\n';
export const DISCONNECT_NOTICE = `Content-Type: text/disconnect-notice\nContent-Length: ${Buffer.byteLength(DISCONNECT_TEXT)}\n\n${DISCONNECT_TEXT}`;

export function commandReply(text: string, extra: Array<[string, string]> = []): string {
  return `Content-Type: command/reply\nReply-Text: ${text}\n${extra.map(([k, v]) => `${k}: ${v}\n`).join('')}\n`;
}

export function apiResponse(body: string): string {
  return `Content-Type: api/response\nContent-Length: ${Buffer.byteLength(body)}\n\n${body}`;
}

/** One switch event: headers in FreeSWITCH's order, and a body for BACKGROUND_JOB and the like. */
export interface SwitchEvent {
  name: string;
  subclass?: string;
  headers: Array<[string, string]>;
  body?: string;
}

export type EventFormat = 'plain' | 'json';

export function header(ev: SwitchEvent, name: string): string | undefined {
  for (const [k, v] of ev.headers) if (k === name) return v;
  return undefined;
}

/** text/event-plain: URL-encoded header values, then the body after its own Content-Length. */
export function serializeEvent(ev: SwitchEvent, format: EventFormat): string {
  let payload: string;
  if (format === 'json') {
    const obj: Record<string, string> = {};
    for (const [k, v] of ev.headers) obj[k] = v;
    if (ev.body !== undefined) {
      obj['Content-Length'] = String(Buffer.byteLength(ev.body));
      obj._body = ev.body;
    }
    payload = JSON.stringify(obj);
  } else {
    payload = ev.headers.map(([k, v]) => `${k}: ${encodeURIComponent(v)}\n`).join('');
    payload += ev.body !== undefined ? `Content-Length: ${Buffer.byteLength(ev.body)}\n\n${ev.body}` : '\n';
  }
  const type = format === 'json' ? 'text/event-json' : 'text/event-plain';
  return `Content-Length: ${Buffer.byteLength(payload)}\nContent-Type: ${type}\n\n${payload}`;
}
