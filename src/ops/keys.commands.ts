import { Client } from 'pg';
import { OWNER_ROLE } from '../config';
import { isSealed } from '../lib/crypto-box';
import type { OpsContext } from './context';
import { ENCRYPTED_FIELDS, fieldName, type EncryptedField } from './keys.fields';
import { keyCounts, resealBatch, sealedBatch } from './keys.repository';
import { OpsRefusal } from './output';

export interface RotationRow {
  field: string;
  /** Values re-encrypted under the current key. */
  rotated: number;
  /** Rewritten by the application between read and write: left as the application wrote them. */
  changed_meanwhile: number;
  /** Not a ciphertext (plain text written before sealing existed): left as they are. */
  plain: number;
  /** Ids of rows whose value opens under no configured key. */
  unreadable: string[];
}

export interface RotationResult {
  current_key_id: string;
  batch_size: number;
  fields: RotationRow[];
}

export interface KeyStatusRow {
  field: string;
  key: string;
  current: boolean;
  count: number;
}

/** The owner connection (DATABASE_URL as dialer_owner): the rotation reaches every tenant's rows. */
async function ownerClient(ctx: OpsContext): Promise<Client> {
  const db = new Client({ connectionString: ctx.deps.config.ownerDatabaseUrl });
  await db.connect();
  try {
    await db.query(`SET ROLE ${OWNER_ROLE}`);
  } catch (err) {
    await db.end();
    throw err;
  }
  return db;
}

async function rotateField(ctx: OpsContext, db: Client, f: EncryptedField, batchSize: number): Promise<RotationRow> {
  const box = ctx.deps.box;
  const row: RotationRow = { field: fieldName(f), rotated: 0, changed_meanwhile: 0, plain: 0, unreadable: [] };
  let after: string | null = null;
  for (;;) {
    const batch = await sealedBatch(db, f, `v2.${box.currentKeyId}.`, after, batchSize);
    if (batch.length === 0) return row;
    after = batch.at(-1)!.id;
    const resealed: { id: string; sealed: string; resealed: string }[] = [];
    for (const r of batch) {
      if (!isSealed(r.sealed)) {
        row.plain += 1;
        continue;
      }
      try {
        resealed.push({ ...r, resealed: box.reseal(r.sealed) });
      } catch {
        row.unreadable.push(r.id);
      }
    }
    const written = await resealBatch(db, f, resealed);
    row.rotated += written;
    row.changed_meanwhile += resealed.length - written;
  }
}

/**
 * Re-encrypts every stored ciphertext (ENCRYPTED_FIELDS) that is not under the current key, in
 * batches of `batchSize` rows, each batch its own transaction. The application keeps running with
 * the current key and the previous ones configured (both read). Idempotent: what is under the
 * current key is never selected, so a second run changes nothing, and a run that stopped part way
 * resumes where it was. Values no configured key opens are listed (ids only) and the command exits 1
 * after doing everything else.
 */
export async function rotateKeys(ctx: OpsContext, opts: { batchSize: number }): Promise<RotationResult> {
  const db = await ownerClient(ctx);
  try {
    const fields: RotationRow[] = [];
    for (const f of ENCRYPTED_FIELDS) fields.push(await rotateField(ctx, db, f, opts.batchSize));
    const result = { current_key_id: ctx.deps.box.currentKeyId, batch_size: opts.batchSize, fields };
    const unreadable = fields.reduce((n, f) => n + f.unreadable.length, 0);
    if (unreadable > 0) {
      const where = fields.filter((f) => f.unreadable.length > 0).map((f) => `${f.field} (${f.unreadable.length})`);
      throw new OpsRefusal(`${unreadable} values open under no configured key, left as they are: ${where.join(', ')}; everything else is rotated`, result);
    }
    return result;
  } finally {
    await db.end();
  }
}

/** How many values of each field each key holds; `keys rotate` is done when only the current key (and plain values) remain. */
export async function keyStatus(ctx: OpsContext): Promise<KeyStatusRow[]> {
  const db = await ownerClient(ctx);
  try {
    const rows: KeyStatusRow[] = [];
    for (const f of ENCRYPTED_FIELDS) {
      for (const c of await keyCounts(db, f)) rows.push({ field: fieldName(f), key: c.key, current: c.key === ctx.deps.box.currentKeyId, count: c.count });
    }
    return rows;
  } finally {
    await db.end();
  }
}
