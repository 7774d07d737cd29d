import type { Client } from '@temporalio/client';
import type { Database } from '../../lib/db';
import type { Logger } from '../../lib/logger';
import { withTenantSql } from '../../lib/tenancy';
import type { EslEvent, EslManager } from '../../switch/esl';
import { wakeSeatedCampaignRuns } from '../dialer/campaign-wake';
import { applyRegistration, registrationOwners } from './switch-directory.repository';

/** The switch's registration events (mod_sofia CUSTOM subclasses) and what each says of the seat. */
const REGISTRATION_EVENTS: Record<string, boolean> = {
  'sofia::register': true,
  'sofia::unregister': false,
  'sofia::expire': false,
};

export interface RegistrationChange {
  registered: boolean;
  /** The credential's username (sofia::register `username`); null when the event does not carry it. */
  username: string | null;
  callId: string | null;
  /** The switch's time of the event (Event-Date-Timestamp, microseconds). */
  at: Date;
}

/** The registration change an ESL event stands for, or null. */
export function toRegistrationChange(ev: EslEvent): RegistrationChange | null {
  if (ev.name !== 'CUSTOM' || ev.subclass === undefined || !(ev.subclass in REGISTRATION_EVENTS)) return null;
  const registered = REGISTRATION_EVENTS[ev.subclass]!;
  const us = Number(ev.headers['Event-Date-Timestamp']);
  const at = new Date(Number.isFinite(us) && us > 0 ? us / 1000 : Date.now());
  const username = (ev.headers.username ?? '').trim() || null;
  const callId = (ev.headers['call-id'] ?? '').trim() || null;
  if (username === null && callId === null) return null;
  return { registered, username: registered ? username : null, callId, at };
}

/** Applies one registration change to the seat(s) it names; answers the tenants of the seats it changed. */
export async function recordRegistration(db: Database, change: RegistrationChange): Promise<string[]> {
  const owners = await registrationOwners(db, change.username, change.callId);
  const changed: string[] = [];
  for (const owner of owners) {
    if (await withTenantSql(db, owner.tenant_id, (sql) => applyRegistration(sql, owner.agent_id, change))) changed.push(owner.tenant_id);
  }
  return changed;
}

/**
 * Keeps agents' `registered` in step with the switch (CONTRACT section 10): sofia::register marks
 * the seat registered, sofia::unregister and sofia::expire unregistered. Every worker with the
 * switch link applies every event; the writes are idempotent and ordered by the switch's event
 * time, so several relays, a repeat or a late event change nothing. Returns a function that stops
 * the relay and waits for the writes in flight.
 */
export function startRegistrationRelay(options: { esl: EslManager; db: Database; logger: Logger; temporal: Client | null }): () => Promise<void> {
  const inFlight = new Set<Promise<void>>();
  const onEvent = (ev: EslEvent) => {
    const change = toRegistrationChange(ev);
    if (!change) return;
    const write = recordRegistration(options.db, change).then(
      // A registered seat is reachable: the tenant's runs that wait for a seat tick now.
      async (tenants) => {
        if (change.registered) for (const tenantId of new Set(tenants)) await wakeSeatedCampaignRuns({ ...options }, tenantId);
      },
      (err: unknown) => options.logger.warn({ err: (err as Error).message, event: ev.subclass }, 'registration event not applied'),
    );
    inFlight.add(write);
    void write.finally(() => inFlight.delete(write));
  };
  options.esl.on('event', onEvent);
  return async () => {
    options.esl.off('event', onEvent);
    await Promise.allSettled([...inFlight]);
  };
}
