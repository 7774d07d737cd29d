import { createHash, randomUUID } from 'node:crypto';
import { withTenantSql } from '../../src/lib/tenancy';
import type { TestApp } from './harness';

/** A tiny but real PCM WAV (8 kHz mono 16-bit), its samples varied by `seed` so files differ. */
export function tinyWav(seed: number, samples = 400): Buffer {
  const data = Buffer.alloc(samples * 2);
  for (let i = 0; i < samples; i += 1) data.writeInt16LE(Math.round(Math.sin((i + seed) / 5) * 8000), i * 2);
  const header = Buffer.alloc(44);
  header.write('RIFF', 0);
  header.writeUInt32LE(36 + data.length, 4);
  header.write('WAVEfmt ', 8);
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20);
  header.writeUInt16LE(1, 22);
  header.writeUInt32LE(8000, 24);
  header.writeUInt32LE(16000, 28);
  header.writeUInt16LE(2, 32);
  header.writeUInt16LE(16, 34);
  header.write('data', 36);
  header.writeUInt32LE(data.length, 40);
  return Buffer.concat([header, data]);
}

export const sha256Hex = (data: Buffer) => createHash('sha256').update(data).digest('hex');

export interface SeedRecordingOptions {
  phone: string;
  startedAt: Date;
  campaignId?: string | null;
  agentId?: string | null;
  accountRef?: string | null;
  externalRef?: string;
  /** The original row's engine disposition. */
  disposition?: string | null;
  /** Corrections appended in this order (the last one is the terminal row). */
  corrections?: string[];
  /** Audio bytes to store; null for a recording without audio in the store. */
  audio?: Buffer | null;
  purged?: boolean;
  retainedUntil?: string;
  legalHold?: boolean;
}

export interface SeededRecording {
  id: string;
  callUuid: string;
  callAttemptId: string;
  debtId: string;
  storageKey: string | null;
  audio: Buffer | null;
}

/** A recording as the capture side writes it: its debt, its CDR rows, its audio in the store. */
export async function seedRecording(app: TestApp, tenantId: string, o: SeedRecordingOptions): Promise<SeededRecording> {
  const callUuid = randomUUID();
  const audio = o.audio === undefined ? tinyWav(Math.floor(Math.random() * 1000)) : o.audio;
  const storageKey = audio ? `recordings/${tenantId}/${callUuid}.wav` : null;
  if (audio && storageKey) await app.deps.objectStore.put(storageKey, audio, { contentType: 'audio/wav' });
  return withTenantSql(app.deps.db, tenantId, async (sql) => {
    const [debt] = await sql.query<{ id: string }>(
      `INSERT INTO debts (tenant_id, campaign_id, external_ref, consumer_ref) VALUES ($1, $2, $3, 'consumer') RETURNING id`,
      [tenantId, o.campaignId ?? null, o.externalRef ?? `ext-${randomUUID()}`],
    );
    const [attempt] = await sql.query<{ id: string }>(
      `INSERT INTO call_attempts (tenant_id, debt_id, campaign_id, agent_id, consumer_ref, debt_key, call_uuid, to_number, started_at,
         ended_at, disposition, inserted_at)
       VALUES ($1, $2, $3, $4, 'consumer', 'key', $5, $6, $7, $7::timestamptz + interval '30 seconds', $8, $7) RETURNING id`,
      [tenantId, debt!.id, o.campaignId ?? null, o.agentId ?? null, callUuid, o.phone, o.startedAt, o.disposition ?? 'answered_human'],
    );
    for (const [i, disposition] of (o.corrections ?? []).entries()) {
      await sql.query(
        `INSERT INTO call_attempts (tenant_id, debt_id, campaign_id, agent_id, consumer_ref, debt_key, call_uuid, to_number, started_at,
           disposition, corrects_id, inserted_at)
         VALUES ($1, $2, $3, $4, 'consumer', 'key', $5, $6, $7, $8, $9, now() + make_interval(secs => $10))`,
        [tenantId, debt!.id, o.campaignId ?? null, o.agentId ?? null, callUuid, o.phone, o.startedAt, disposition, attempt!.id, i + 1],
      );
    }
    const [recording] = await sql.query<{ id: string }>(
      `INSERT INTO recordings (tenant_id, call_attempt_id, call_uuid, campaign_id, debt_id, agent_id, phone_number, account_ref,
         external_ref, started_at, ended_at, duration_secs, local_tz, storage_key, content_type, size_bytes, sha256, retained_until,
         legal_hold, legal_hold_reason, legal_hold_at, audio_purged_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $10::timestamptz + interval '30 seconds', 30, 'America/New_York', $11,
         'audio/wav', $12, $13, $14::date, $15, CASE WHEN $15 THEN 'seeded hold' END, CASE WHEN $15 THEN now() END,
         CASE WHEN $16 THEN now() END)
       RETURNING id`,
      [
        tenantId,
        attempt!.id,
        callUuid,
        o.campaignId ?? null,
        debt!.id,
        o.agentId ?? null,
        o.phone,
        o.accountRef ?? null,
        o.externalRef ?? null,
        o.startedAt,
        o.purged ? null : storageKey,
        audio?.length ?? null,
        audio ? sha256Hex(audio) : null,
        o.retainedUntil ?? '2033-01-31',
        o.legalHold ?? false,
        o.purged ?? false,
      ],
    );
    return { id: recording!.id, callUuid, callAttemptId: attempt!.id, debtId: debt!.id, storageKey: o.purged ? null : storageKey, audio: o.purged ? null : audio };
  });
}
