import { header, type EventFormat, type SwitchEvent } from './protocol';

/** Event names of switch_event.c (EVENT_NAMES), which `event <format> <names>` accepts. */
export const EVENT_NAMES: ReadonlySet<string> = new Set([
  'CUSTOM', 'CLONE', 'CHANNEL_CREATE', 'CHANNEL_DESTROY', 'CHANNEL_STATE', 'CHANNEL_CALLSTATE', 'CHANNEL_ANSWER',
  'CHANNEL_HANGUP', 'CHANNEL_HANGUP_COMPLETE', 'CHANNEL_EXECUTE', 'CHANNEL_EXECUTE_COMPLETE', 'CHANNEL_HOLD',
  'CHANNEL_UNHOLD', 'CHANNEL_BRIDGE', 'CHANNEL_UNBRIDGE', 'CHANNEL_PROGRESS', 'CHANNEL_PROGRESS_MEDIA',
  'CHANNEL_OUTGOING', 'CHANNEL_PARK', 'CHANNEL_UNPARK', 'CHANNEL_APPLICATION', 'CHANNEL_ORIGINATE', 'CHANNEL_UUID',
  'API', 'LOG', 'INBOUND_CHAN', 'OUTBOUND_CHAN', 'STARTUP', 'SHUTDOWN', 'PUBLISH', 'UNPUBLISH', 'TALK', 'NOTALK',
  'SESSION_CRASH', 'MODULE_LOAD', 'MODULE_UNLOAD', 'DTMF', 'MESSAGE', 'PRESENCE_IN', 'NOTIFY_IN', 'PRESENCE_OUT',
  'PRESENCE_PROBE', 'MESSAGE_WAITING', 'MESSAGE_QUERY', 'ROSTER', 'CODEC', 'BACKGROUND_JOB', 'DETECTED_SPEECH',
  'DETECTED_TONE', 'PRIVATE_COMMAND', 'HEARTBEAT', 'TRAP', 'ADD_SCHEDULE', 'DEL_SCHEDULE', 'EXE_SCHEDULE',
  'RE_SCHEDULE', 'RELOADXML', 'NOTIFY', 'PHONE_FEATURE', 'PHONE_FEATURE_SUBSCRIBE', 'SEND_MESSAGE', 'RECV_MESSAGE',
  'REQUEST_PARAMS', 'CHANNEL_DATA', 'GENERAL', 'COMMAND', 'SESSION_HEARTBEAT', 'CLIENT_DISCONNECTED',
  'SERVER_DISCONNECTED', 'SEND_INFO', 'RECV_INFO', 'RECV_RTCP_MESSAGE', 'SEND_RTCP_MESSAGE', 'CALL_SECURE', 'NAT',
  'RECORD_START', 'RECORD_STOP', 'PLAYBACK_START', 'PLAYBACK_STOP', 'CALL_UPDATE', 'FAILURE', 'SOCKET_DATA',
  'MEDIA_BUG_START', 'MEDIA_BUG_STOP', 'CONFERENCE_DATA_QUERY', 'CONFERENCE_DATA', 'CALL_SETUP_REQ',
  'CALL_SETUP_RESULT', 'CALL_DETAIL', 'DEVICE_STATE', 'TEXT', 'SHUTDOWN_REQUESTED', 'ALL',
]);

/**
 * One connection's event subscription, with mod_event_socket's rules: `event` is additive and sets
 * the format for the whole connection; after the keyword CUSTOM every further word is a subclass;
 * a CUSTOM event is sent only for a subscribed subclass (or ALL); when filters exist an event must
 * match at least one `filter <header> <value>` (a value in slashes is a regular expression).
 */
export class Subscription {
  format: EventFormat | null = null;
  private all = false;
  private readonly names = new Set<string>();
  private readonly subclasses = new Set<string>();
  private filters: Array<{ header: string; value: string }> = [];

  /** Applies `event <format> <words...>`; false when no word named an event. */
  enable(format: EventFormat, words: string[]): boolean {
    let custom = false;
    let keys = 0;
    for (const word of words) {
      if (custom) {
        this.subclasses.add(word);
        continue;
      }
      const name = word.toUpperCase();
      if (!EVENT_NAMES.has(name)) continue;
      keys++;
      if (name === 'ALL') this.all = true;
      else this.names.add(name);
      if (name === 'CUSTOM') custom = true;
    }
    if (keys === 0) return false;
    this.format = format;
    return true;
  }

  /** `nixevent <words...>`. */
  nix(words: string[]): void {
    let custom = false;
    for (const word of words) {
      if (custom) {
        this.subclasses.delete(word);
        continue;
      }
      const name = word.toUpperCase();
      if (name === 'ALL') {
        this.all = false;
        this.names.clear();
        this.subclasses.clear();
      } else this.names.delete(name);
      if (name === 'CUSTOM') custom = true;
    }
  }

  /** `noevents`. */
  clear(): void {
    this.all = false;
    this.names.clear();
    this.subclasses.clear();
    this.format = null;
  }

  addFilter(headerName: string, value: string): void {
    this.filters.push({ header: headerName, value });
  }

  /** `filter delete <header> [value]`, `filter delete all`. */
  deleteFilter(headerName: string, value?: string): void {
    if (headerName.toLowerCase() === 'all') {
      this.filters = [];
      return;
    }
    this.filters = this.filters.filter((f) => !(f.header === headerName && (value === undefined || f.value === value)));
  }

  /** Subscribed to events named `name` (or ALL), filters aside. */
  listensTo(name: string): boolean {
    return this.format !== null && (this.all || this.names.has(name));
  }

  wants(ev: SwitchEvent): boolean {
    if (!this.format) return false;
    let send = this.all;
    if (!send && this.names.has(ev.name)) {
      send = ev.name !== 'CUSTOM' || (ev.subclass !== undefined && this.subclasses.has(ev.subclass));
    }
    if (!send || this.filters.length === 0) return send;
    return this.filters.some((f) => {
      const v = header(ev, f.header);
      if (v === undefined) return false;
      if (f.value.length > 2 && f.value.startsWith('/') && f.value.endsWith('/')) {
        try {
          return new RegExp(f.value.slice(1, -1)).test(v);
        } catch {
          return false;
        }
      }
      return v === f.value;
    });
  }
}
