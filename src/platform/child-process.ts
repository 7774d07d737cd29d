import { AggregatorRegistry, type Registry } from 'prom-client';
import { SERVICE_NAME } from '../config';
import type { Logger } from '../lib/logger';
import type { ShutdownOptions } from '../runtime';
import type { SwitchSimulator } from '../switch/simulator';
import type { EslManager } from '../switch/esl';

/**
 * The child side of `npm start`'s process layout (src/platform/supervisor.ts): an API or worker
 * process started by the supervisor. The same entries run on their own (`npm run api`,
 * `npm run worker`), where none of this applies.
 */

/** Set by the supervisor in each child's environment: `api-1`, `worker-2`. */
export const CHILD_ENV = 'DIALER_PROCESS';
/**
 * Set by the supervisor when it runs the switch simulator and SIM_AUTO_REGISTER is 1: API
 * processes then play the browsers' softphones through their switch link.
 */
export const SIMULATED_SOFTPHONES_ENV = 'DIALER_SIMULATED_SOFTPHONES';

export type ChildRole = 'api' | 'worker';

export interface ChildIdentity {
  /** `api-1`, `worker-2`: the `process` label of its metrics and the `process` field of its logs. */
  name: string;
  role: ChildRole;
}

/** The message a child sends once it serves (an API process with its port). */
export interface ReadyMessage {
  kind: 'dialer:ready';
  port?: number;
}

export function isReadyMessage(m: unknown): m is ReadyMessage {
  return typeof m === 'object' && m !== null && (m as { kind?: unknown }).kind === 'dialer:ready';
}

/** This process's place under the supervisor, or null when it runs on its own. */
export function supervisedAs(role: ChildRole): ChildIdentity | null {
  const name = process.env[CHILD_ENV];
  if (!name || !process.send || !name.startsWith(`${role}-`)) return null;
  return { name, role };
}

/**
 * Under the supervisor only SIGTERM (sent by the supervisor, in order) stops a child: Ctrl-C
 * reaches the terminal's whole process group, and a child that stopped on it would drain beside
 * the processes it should wait for.
 */
export function childShutdownOptions(child: ChildIdentity | null): ShutdownOptions {
  return child ? { signals: ['SIGTERM'], ignore: ['SIGINT'] } : {};
}

/**
 * A supervisor that disappears without stopping its children (SIGKILL) closes their IPC channel:
 * each then stops on its own as at SIGTERM, so no orphan keeps dialing.
 */
export function stopWhenOrphaned(child: ChildIdentity | null, stop: (why: string) => void): void {
  if (child) process.once('disconnect', () => stop('the supervisor is gone'));
}

export function reportReady(child: ChildIdentity | null, message: Omit<ReadyMessage, 'kind'> = {}): void {
  if (child) process.send?.({ kind: 'dialer:ready', ...message } satisfies ReadyMessage);
}

/**
 * The supervisor serves one METRICS_PORT for every process (prom-client's cluster aggregation):
 * each child answers its requests with its own registry, its series told apart by `process`.
 */
export function shareMetrics(child: ChildIdentity | null, registry: Registry): void {
  if (!child) return;
  registry.setDefaultLabels({ service: SERVICE_NAME, process: child.name });
  AggregatorRegistry.setRegistries([registry]);
  // Constructing one installs the child's answering listener.
  new AggregatorRegistry();
}

/**
 * The embedded simulator's softphone commands over a switch link (`api sim_register`,
 * `api sim_unregister`), for API processes that do not hold the simulator itself. Commands on one
 * link are answered in order, so a seat's un-REGISTER never overtakes its REGISTER.
 */
export function simulatorOverEsl(esl: EslManager, logger: Logger): Pick<SwitchSimulator, 'register' | 'unregister'> {
  return {
    async register(reg) {
      const target = reg.domain ? `${reg.extension}@${reg.domain}` : reg.extension;
      const answer = (await esl.api(`sim_register ${target} ${reg.username} ${reg.password}${reg.expiresSec !== undefined ? ` ${reg.expiresSec}` : ''}`)).trim();
      if (!answer.startsWith('+OK')) throw new Error(`REGISTER ${target}: ${answer}`);
      return answer;
    },
    unregister(extension) {
      esl.api(`sim_unregister ${extension}`).catch((err: unknown) => logger.debug({ err: (err as Error).message }, 'simulated softphone was not registered'));
    },
  };
}
