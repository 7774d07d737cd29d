import type { BrowserSoftphones } from '../../modules/agents/softphones';
import type { SwitchSimulator } from './server';

export interface SimulatedSoftphonesOptions {
  /** Expires asked for in each REGISTER; the softphone refreshes at half of it, as SIP user agents do. */
  expiresSec?: number;
  logger: { warn(obj: object, msg?: string): void; debug(obj: object, msg?: string): void };
}

interface Phone {
  timer: NodeJS.Timeout | null;
  /** Each seat's REGISTERs and un-REGISTERs go out one after another, in the order asked. */
  chain: Promise<void>;
}

/**
 * The browsers of the embedded simulator (SIM_AUTO_REGISTER): at check-in a browser seat's softphone
 * REGISTERs with the check-in's ephemeral credential, through the product's switch directory with
 * digest authentication, and keeps refreshing it until its credential expires; at check-out it
 * unregisters. A refused REGISTER (a superseded credential, a directory that cannot be reached) is
 * logged and leaves the seat unregistered, hence not dialable, as a real browser's would.
 */
export function createSimulatedSoftphones(sim: Pick<SwitchSimulator, 'register' | 'unregister'>, options: SimulatedSoftphonesOptions): BrowserSoftphones & { stop(): void } {
  const expiresSec = options.expiresSec ?? 600;
  const phones = new Map<string, Phone>();
  const phoneOf = (agentId: string): Phone => {
    let p = phones.get(agentId);
    if (!p) phones.set(agentId, (p = { timer: null, chain: Promise.resolve() }));
    return p;
  };
  const enqueue = (p: Phone, step: () => Promise<void>) => {
    p.chain = p.chain.then(step, step);
  };
  return {
    checkedIn(seat) {
      const p = phoneOf(seat.agentId);
      if (p.timer) clearInterval(p.timer);
      const register = () =>
        enqueue(p, async () => {
          if (seat.expiresAt.getTime() <= Date.now()) return;
          await sim
            .register({ extension: seat.extension, domain: seat.domain ?? undefined, username: seat.username, password: seat.password, expiresSec })
            .then(
              () => options.logger.debug({ agent_id: seat.agentId }, 'simulated softphone registered'),
              (err: unknown) => options.logger.warn({ agent_id: seat.agentId, err: (err as Error).message }, 'simulated softphone REGISTER refused'),
            );
        });
      register();
      p.timer = setInterval(register, (expiresSec * 1000) / 2);
      p.timer.unref();
    },
    checkedOut(seat) {
      const p = phoneOf(seat.agentId);
      if (p.timer) clearInterval(p.timer);
      p.timer = null;
      enqueue(p, () => {
        try {
          sim.unregister(seat.domain ? `${seat.extension}@${seat.domain}` : seat.extension);
        } catch {
          // Not registered (never was, or already flushed by the check-out's teardown): nothing to drop.
        }
        return Promise.resolve();
      });
    },
    stop() {
      for (const p of phones.values()) if (p.timer) clearInterval(p.timer);
      phones.clear();
    },
  };
}
