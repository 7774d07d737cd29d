import cluster, { type Worker as ClusterWorker } from 'node:cluster';
import { AggregatorRegistry, type PrometheusContentType } from 'prom-client';
import type { Logger } from '../lib/logger';
import type { ShutdownStep } from '../runtime';
import { CHILD_ENV, isReadyMessage, type ChildRole } from './child-process';

/**
 * The parent side of `npm start`'s process layout: API and worker processes forked with node
 * cluster (API processes share one listening port; the kernel's connections are handed to them in
 * turn), each its own event loop, so a busy worker never holds an API request.
 *
 * A child that exits while no shutdown is under way is logged as an error and restarted after a
 * back-off (1 s doubling to 30 s); one that exits RESTARTS_PER_WINDOW times within RESTART_WINDOW_MS
 * is not going to recover on its own, and takes the whole start down (exit 1) through the ordinary
 * shutdown. A child that fails before its first ready message fails the start at once.
 */

const RESTART_WINDOW_MS = 60_000;
const RESTARTS_PER_WINDOW = 5;
const RESTART_DELAY_MS = { initial: 1000, max: 30_000 };

interface Child {
  name: string;
  role: ChildRole;
  exec: string;
  env: Record<string, string>;
  worker: ClusterWorker | null;
  /** The back-off timer of a pending restart. */
  timer: NodeJS.Timeout | null;
  exits: number[];
  stopping: boolean;
  exited: Promise<void>;
}

export interface ChildSpec {
  role: ChildRole;
  /** The entry file the child runs (with this process's execArgv, so tsx carries over). */
  exec: string;
  /** Environment on top of this process's, per child (`index` from 1). */
  env: (index: number) => Record<string, string>;
}

export interface ReadyChild {
  name: string;
  pid: number;
  port?: number;
}

export class ProcessGroup {
  private readonly children: Child[] = [];

  constructor(
    private readonly logger: Logger,
    /** A child that keeps failing: the start must end (the caller's shutdown with exit 1). */
    private readonly fatal: (why: string) => void,
  ) {}

  /** Forks `count` children of a spec and resolves once each has said it serves. */
  async start(spec: ChildSpec, count: number): Promise<ReadyChild[]> {
    const started: Promise<ReadyChild>[] = [];
    for (let index = 1; index <= count; index += 1) {
      const child: Child = {
        name: `${spec.role}-${index}`,
        role: spec.role,
        exec: spec.exec,
        env: spec.env(index),
        worker: null,
        timer: null,
        exits: [],
        stopping: false,
        exited: Promise.resolve(),
      };
      this.children.push(child);
      started.push(this.fork(child, true));
    }
    return Promise.all(started);
  }

  pids(role: ChildRole): number[] {
    return this.children.filter((c) => c.role === role && c.worker?.process.pid).map((c) => c.worker!.process.pid!);
  }

  /**
   * The shutdown step of every child of a role: SIGTERM to each at the signal (they drain side by
   * side with the other steps' drains), then waits for each to exit.
   */
  shutdownStep(role: ChildRole, name: string): ShutdownStep {
    const mine = () => this.children.filter((c) => c.role === role);
    return {
      name,
      begin: () => {
        for (const child of mine()) {
          child.stopping = true;
          if (child.timer) clearTimeout(child.timer);
          child.worker?.process.kill('SIGTERM');
        }
      },
      run: async () => {
        await Promise.all(mine().map((c) => c.exited));
      },
      force: () => {
        for (const child of mine()) child.worker?.process.kill('SIGKILL');
      },
    };
  }

  private fork(child: Child, initial: boolean): Promise<ReadyChild> {
    cluster.setupPrimary({ exec: child.exec });
    const worker = cluster.fork({ ...child.env, [CHILD_ENV]: child.name });
    child.worker = worker;
    let ready = false;
    child.exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    return new Promise<ReadyChild>((resolve, reject) => {
      worker.on('message', (m: unknown) => {
        if (ready || !isReadyMessage(m)) return;
        ready = true;
        const info: ReadyChild = { name: child.name, pid: worker.process.pid!, ...(m.port !== undefined ? { port: m.port } : {}) };
        this.logger.info({ process: child.name, pid: info.pid }, 'process ready');
        resolve(info);
      });
      worker.once('exit', (code: number | null, signal: NodeJS.Signals | null) => {
        child.worker = null;
        if (child.stopping) {
          this.logger.info({ process: child.name, code, signal }, 'process stopped');
          if (!ready) reject(new Error(`${child.name} stopped before it was ready`));
          return;
        }
        if (!ready) reject(new Error(`${child.name} exited before it was ready (code ${code}, signal ${signal}); its log says why`));
        if (ready || !initial) this.exitedUnexpectedly(child, code, signal);
      });
    });
  }

  private exitedUnexpectedly(child: Child, code: number | null, signal: NodeJS.Signals | null): void {
    const now = Date.now();
    child.exits = [...child.exits.filter((t) => now - t < RESTART_WINDOW_MS), now];
    if (child.exits.length >= RESTARTS_PER_WINDOW) {
      this.logger.error({ process: child.name, code, signal, exits: child.exits.length, window_ms: RESTART_WINDOW_MS }, 'process keeps exiting: stopping everything');
      this.fatal(`${child.name} exited ${child.exits.length} times within ${RESTART_WINDOW_MS} ms`);
      return;
    }
    const delay = Math.min(RESTART_DELAY_MS.max, RESTART_DELAY_MS.initial * 2 ** (child.exits.length - 1));
    this.logger.error({ process: child.name, code, signal, restart_in_ms: delay }, 'process exited unexpectedly: restarting it');
    child.timer = setTimeout(() => {
      child.timer = null;
      if (child.stopping) return;
      // A restart that fails before it is ready is one more exit, counted like the first.
      this.fork(child, false).catch(() => undefined);
    }, delay);
  }
}

/**
 * METRICS_PORT of `npm start`: every child's registry gathered over IPC at each scrape (series
 * told apart by their `process` label).
 */
export class ClusterMetricsRegistry extends AggregatorRegistry<PrometheusContentType> {
  override metrics(): Promise<string> {
    return this.clusterMetrics();
  }
}
