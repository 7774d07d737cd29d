import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import path from 'node:path';
import { ROOT_DIR } from '../config';
import { ensureSpeechEngine } from './engine-install';
import { encodeFrame, FrameReader, type Frame } from './protocol';

export const SPEECH_SERVER_SCRIPT = path.join(ROOT_DIR, 'src', 'speech', 'engine', 'speech_server.py');
const REQUEST_TIMEOUT_MS = 30_000;
/** A crash within this long of the previous start waits this long before the next start. */
const RESTART_BACKOFF_MS = 1_000;

export class SpeechEngineError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SpeechEngineError';
  }
}

export interface SpeechEngineOptions {
  toolsDir: string;
  log?: (level: 'info' | 'warn', msg: string) => void;
  /** Tests: a Python other than the installed engine's (nothing is installed then). */
  python?: string;
  requestTimeoutMs?: number;
}

interface Pending {
  resolve(frame: Frame): void;
  reject(err: Error): void;
  timer: NodeJS.Timeout;
}

interface Running {
  child: ChildProcessWithoutNullStreams;
  pending: Map<number, Pending>;
  /** Bumped per start, so a stream opened on an earlier process knows it is gone. */
  generation: number;
}

/**
 * The offline speech sidecar: one long-lived Python process (speech_server.py) spoken to over its
 * stdio. Started on the first request (installing the engines if needed), started again on the next
 * request after it dies (requests in flight fail with SpeechEngineError; language models are loaded
 * again), stopped by close(). A child also exits on its own when this process dies: its stdin closes.
 */
export class SpeechEngine {
  private running: Running | null = null;
  private starting: Promise<Running> | null = null;
  private nextId = 1;
  private generation = 0;
  private lastStart = 0;
  private closed = false;
  private readonly languageModels = new Map<string, string>();
  private stderrTail = '';

  constructor(private readonly opts: SpeechEngineOptions) {}

  /** The generation of the running process (0 before the first start). */
  get currentGeneration(): number {
    return this.running?.generation ?? 0;
  }

  get pid(): number | null {
    return this.running?.child.pid ?? null;
  }

  /**
   * A language model built by the sidecar from `corpus` (one sentence a line) and used by
   * recognitions that name it (or by default when named `domain`). Kept, and loaded into every
   * process started later.
   */
  async setLanguageModel(name: string, corpus: string): Promise<void> {
    this.languageModels.set(name, corpus);
    // Not running: the start loads it (the engine stays lazy).
    if (this.running) await this.send(this.running, { op: 'set_language_model', name, corpus });
  }

  /** Starts the engine now (and installs it if needed) rather than on the first request. */
  async warmUp(): Promise<void> {
    await this.ensureRunning();
  }

  async request(header: Record<string, unknown>, payload?: Buffer): Promise<Frame & { generation: number }> {
    const running = await this.ensureRunning();
    const frame = await this.send(running, header, payload);
    return { ...frame, generation: running.generation };
  }

  /** Sends on a given generation only: a stream's frames must never reach a process that never saw its start. */
  async requestOn(generation: number, header: Record<string, unknown>, payload?: Buffer): Promise<Frame> {
    const running = this.running;
    if (!running || running.generation !== generation) throw new SpeechEngineError('speech engine restarted: the stream is gone');
    return this.send(running, header, payload);
  }

  async close(): Promise<void> {
    this.closed = true;
    const running = this.running ?? (this.starting ? await this.starting.catch(() => null) : null);
    if (!running) return;
    const { child } = running;
    if (child.exitCode !== null || child.signalCode !== null) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => child.kill('SIGKILL'), 2_000);
      child.once('exit', () => {
        clearTimeout(timer);
        resolve();
      });
      child.stdin.end();
      child.kill('SIGTERM');
    });
  }

  private ensureRunning(): Promise<Running> {
    if (this.closed) return Promise.reject(new SpeechEngineError('speech engine closed'));
    if (this.running) return Promise.resolve(this.running);
    this.starting ??= this.start().finally(() => {
      this.starting = null;
    });
    return this.starting;
  }

  private async start(): Promise<Running> {
    const wait = this.lastStart + RESTART_BACKOFF_MS - Date.now();
    if (this.lastStart && wait > 0) await new Promise((r) => setTimeout(r, wait));
    const log = this.opts.log ?? (() => undefined);
    const python = this.opts.python ?? (await ensureSpeechEngine(this.opts.toolsDir, (msg) => log('info', msg)));
    if (this.closed) throw new SpeechEngineError('speech engine closed');
    this.lastStart = Date.now();
    const child = spawn(python, ['-u', SPEECH_SERVER_SCRIPT], { stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1' } });
    const running: Running = { child, pending: new Map(), generation: ++this.generation };
    const reader = new FrameReader();
    const fail = (err: Error) => {
      for (const p of running.pending.values()) {
        clearTimeout(p.timer);
        p.reject(err);
      }
      running.pending.clear();
    };
    child.stdout.on('data', (chunk: Buffer) => {
      let frames: Frame[];
      try {
        frames = reader.push(chunk);
      } catch (err) {
        log('warn', `speech engine: ${(err as Error).message}; restarting it`);
        child.kill('SIGKILL');
        return;
      }
      for (const frame of frames) {
        const id = frame.header.id as number;
        const p = running.pending.get(id);
        if (!p) continue;
        running.pending.delete(id);
        clearTimeout(p.timer);
        if (frame.header.ok === true) p.resolve(frame);
        else p.reject(new SpeechEngineError(typeof frame.header.error === 'string' ? frame.header.error : 'speech engine error'));
      }
    });
    child.stderr.on('data', (chunk: Buffer) => {
      this.stderrTail = (this.stderrTail + chunk.toString()).slice(-2000);
    });
    // EPIPE after a crash surfaces through 'exit'; the write's own error adds nothing.
    child.stdin.on('error', () => undefined);
    child.once('error', (err) => {
      if (this.running === running) this.running = null;
      fail(new SpeechEngineError(`speech engine failed to start: ${err.message}`));
    });
    child.once('exit', (code, signal) => {
      if (this.running === running) this.running = null;
      if (!this.closed) log('warn', `speech engine exited (${signal ?? `code ${code}`}); it starts again on the next request${this.stderrTail ? `: ${this.stderrTail.trim().split('\n').slice(-3).join(' | ')}` : ''}`);
      fail(new SpeechEngineError(`speech engine exited (${signal ?? `code ${code}`})`));
    });
    await this.send(running, { op: 'hello' });
    for (const [name, corpus] of this.languageModels) await this.send(running, { op: 'set_language_model', name, corpus });
    // Published only now, so no request overtakes the language models.
    this.running = running;
    return running;
  }

  private send(running: Running, header: Record<string, unknown>, payload?: Buffer): Promise<Frame> {
    const id = this.nextId++;
    return new Promise<Frame>((resolve, reject) => {
      if (running.child.exitCode !== null || running.child.signalCode !== null) {
        reject(new SpeechEngineError('speech engine exited'));
        return;
      }
      const timer = setTimeout(() => {
        running.pending.delete(id);
        reject(new SpeechEngineError(`speech engine did not answer ${String(header.op)} in time`));
        // A hung engine holds every later request too: start a fresh one.
        running.child.kill('SIGKILL');
      }, this.opts.requestTimeoutMs ?? REQUEST_TIMEOUT_MS);
      running.pending.set(id, { resolve, reject, timer });
      running.child.stdin.write(encodeFrame({ ...header, id }, payload));
    });
  }
}
