import { Client } from 'pg';
import { LIVE_CHANNEL } from '../../lib/events';
import type { Logger } from '../../lib/logger';
import { listenLiveChannel } from './live.repository';

/** How the listener's backend shows in pg_stat_activity (per process, so an operator can tell them apart). */
export const LISTENER_APPLICATION_NAME = `dialer-live-floor:${process.pid}`;

export interface LiveListenerOptions {
  connectionString: string;
  logger: Logger;
  onPayload(payload: string): void;
  backoff?: { initialMs: number; maxMs: number };
}

/**
 * One dedicated connection per API process that LISTENs on the live channel. Events are committed
 * by any process (API or worker), so the database is the fan-out bus; this connection brings them
 * to the sockets of this process. A lost connection is re-established with capped, jittered
 * back-off; notifications sent while it was down are not replayed (the live floor is a view, the
 * records stay in their tables and the webhook outbox).
 */
export class LiveListener {
  private client: Client | null = null;
  private closed = false;
  private attempt = 0;
  private timer: NodeJS.Timeout | undefined;
  private waiters: ((listening: boolean) => void)[] = [];
  private readonly initialMs: number;
  private readonly maxMs: number;

  constructor(private readonly o: LiveListenerOptions) {
    this.initialMs = o.backoff?.initialMs ?? 250;
    this.maxMs = o.backoff?.maxMs ?? 10_000;
  }

  start(): void {
    void this.connect();
  }

  get listening(): boolean {
    return this.client !== null;
  }

  /** Resolves true once LISTEN is in effect, false after `timeoutMs` without it. */
  whenListening(timeoutMs: number): Promise<boolean> {
    if (this.client) return Promise.resolve(true);
    return new Promise((resolve) => {
      const done = (listening: boolean) => {
        clearTimeout(t);
        resolve(listening);
      };
      const t = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== done);
        resolve(false);
      }, timeoutMs);
      this.waiters.push(done);
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    const client = this.client;
    this.client = null;
    for (const w of this.waiters.splice(0)) w(false);
    await client?.end().catch(() => undefined);
  }

  private async connect(): Promise<void> {
    if (this.closed) return;
    const client = new Client({ connectionString: this.o.connectionString, application_name: LISTENER_APPLICATION_NAME });
    client.on('error', (err) => this.lost(client, err));
    client.on('end', () => this.lost(client));
    client.on('notification', (msg) => {
      if (msg.channel === LIVE_CHANNEL && msg.payload) this.o.onPayload(msg.payload);
    });
    try {
      await client.connect();
      await listenLiveChannel(client);
    } catch (err) {
      await client.end().catch(() => undefined);
      this.retry(err);
      return;
    }
    if (this.closed) {
      await client.end().catch(() => undefined);
      return;
    }
    if (this.attempt > 0) this.o.logger.info('live floor listener reconnected');
    this.client = client;
    this.attempt = 0;
    for (const w of this.waiters.splice(0)) w(true);
  }

  private lost(client: Client, err?: Error): void {
    // Errors of a client that is still connecting are handled by connect(); 'error' and 'end' of
    // one loss arrive together and must schedule one reconnection.
    if (client !== this.client) return;
    this.client = null;
    client.end().catch(() => undefined);
    this.retry(err);
  }

  private retry(err: unknown): void {
    if (this.closed) return;
    const ceiling = Math.min(this.maxMs, this.initialMs * 2 ** Math.min(this.attempt, 20));
    const delay = Math.round(ceiling / 2 + (Math.random() * ceiling) / 2);
    this.attempt += 1;
    this.o.logger.warn(
      { err: err instanceof Error ? err.message : undefined, retry_in_ms: delay },
      'live floor listener is down: socket events pause until it reconnects',
    );
    this.timer = setTimeout(() => void this.connect(), delay);
    this.timer.unref();
  }
}
