/** The parts of modesl 1.2 (FreeSWITCH ESL client, no bundled types) this project uses. */
declare module 'modesl' {
  import type { Socket } from 'node:net';

  type Listener = (...args: unknown[]) => void;

  export class Event {
    constructor(headers?: Record<string, unknown> | string, bodyOrSubclass?: string);
    headers: Array<{ name: string; value: unknown }>;
    type: string;
    subclass?: string;
    body: string;
    getHeader(name: string): unknown;
    getBody(): string;
    getType(): string;
    serialize(format?: 'plain' | 'json' | 'xml'): string;
  }

  export class Connection {
    /** Inbound connection: connects, answers auth/request with the password, then emits esl::ready. */
    constructor(host: string, port: number, password: string, onReady?: () => void);
    constructor(socket: Socket, onReady?: () => void);
    socket: Socket | null;
    authed: boolean;
    api(command: string, cb: (res: Event) => void): void;
    api(command: string, args: string | string[], cb: (res: Event) => void): void;
    bgapi(command: string, args: string | string[], jobUuid: string | null, cb: (res: Event) => void): void;
    sendRecv(command: string, args: Record<string, string> | null, cb?: (res: Event) => void): void;
    send(command: string, args?: Record<string, string>): void;
    events(type: 'plain' | 'json' | 'xml', events: string | string[], cb?: (res: Event) => void): void;
    filter(header: string, value: string, cb?: (res: Event) => void): void;
    execute(app: string, arg: string, uuid: string, cb?: (res: Event) => void): string;
    disconnect(): void;
    connected(): boolean;
    on(event: string, listener: Listener): this;
    once(event: string, listener: Listener): this;
    off(event: string, listener: Listener): this;
    removeAllListeners(event?: string): this;
  }

  export class Parser {
    constructor(socket: NodeJS.EventEmitter);
    on(event: string, listener: Listener): this;
  }
}
