import type { Did } from '../../../prisma/generated/client';
import type { z } from '../../lib/openapi';
import type { DidSettings } from './did.rules';
import { verificationViewOf } from './did-verification.rules';
import type { DidSchema } from './did.schemas';

type DidView = z.infer<typeof DidSchema>;

export function didSettings(d: Did): DidSettings {
  return {
    e164: d.e164,
    npa: d.npa,
    us_state: d.usState,
    attestation: d.attestation as DidSettings['attestation'],
    status: d.status as DidSettings['status'],
    labels: d.labels,
    notes: d.notes,
  };
}

export function didView(d: Did, now: Date = new Date()): DidView {
  return {
    id: d.id,
    tenant_id: d.tenantId,
    e164: d.e164,
    npa: d.npa,
    us_state: d.usState,
    attestation: d.attestation as DidView['attestation'],
    status: d.status as DidView['status'],
    origin: d.origin as DidView['origin'],
    labels: d.labels,
    notes: d.notes,
    created_at: d.createdAt.toISOString(),
    updated_at: d.updatedAt.toISOString(),
    verification: verificationViewOf(
      { status: d.verificationStatus, method: d.verificationMethod, expiresAt: d.verificationExpiresAt, attempts: d.verificationAttempts },
      now,
    ),
  };
}

/** Column values of the given settings keys (e164 only on create). */
export function didData(s: DidSettings, keys: readonly (keyof DidSettings)[]) {
  const data: { npa?: string | null; usState?: string | null; attestation?: string; status?: string; labels?: string[]; notes?: string | null } = {};
  for (const key of keys) {
    switch (key) {
      case 'npa': data.npa = s.npa; break;
      case 'us_state': data.usState = s.us_state; break;
      case 'attestation': data.attestation = s.attestation; break;
      case 'status': data.status = s.status; break;
      case 'labels': data.labels = s.labels; break;
      case 'notes': data.notes = s.notes; break;
      case 'e164': break;
    }
  }
  return data;
}
