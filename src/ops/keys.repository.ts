import type { Client } from 'pg';
import type { EncryptedField } from './keys.fields';

/**
 * SQL of the key rotation. It runs on the owner connection (DATABASE_URL, role dialer_owner, which
 * bypasses row-level security): re-encryption is deployment-wide, like a migration, and touches
 * nothing but the ciphertext. Identifiers come from ENCRYPTED_FIELDS (code, never input).
 */

const ident = (name: string) => {
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`not an identifier: ${name}`);
  return `"${name}"`;
};

const pathLiteral = (path: readonly string[]) => `'{${path.map((p) => ident(p).slice(1, -1)).join(',')}}'`;

/** The SQL expression of the stored ciphertext (text), or null where there is none. */
function valueOf(f: EncryptedField): string {
  return f.path ? `${ident(f.column)} #>> ${pathLiteral(f.path)}` : ident(f.column);
}

export interface SealedRow {
  id: string;
  sealed: string;
}

/**
 * The next rows after `after` (by id) whose value is not already under the current key: the keyset
 * makes one pass over the table, and the filter makes a second run (or a resumed one) skip what is done.
 */
export async function sealedBatch(db: Client, f: EncryptedField, currentPrefix: string, after: string | null, limit: number): Promise<SealedRow[]> {
  const value = valueOf(f);
  const res = await db.query<SealedRow>(
    `SELECT id::text AS id, ${value} AS sealed FROM ${ident(f.table)}
      WHERE ${value} IS NOT NULL AND left(${value}, length($1)) <> $1 AND ($2::uuid IS NULL OR id > $2::uuid)
      ORDER BY id LIMIT $3`,
    [currentPrefix, after, limit],
  );
  return res.rows;
}

/**
 * Writes the new ciphertexts in one statement, each only where the row still holds the value that
 * was read (a row the application rewrote meanwhile keeps what it wrote). Returns the rows changed.
 */
export async function resealBatch(db: Client, f: EncryptedField, rows: { id: string; sealed: string; resealed: string }[]): Promise<number> {
  if (rows.length === 0) return 0;
  const set = f.path ? `${ident(f.column)} = jsonb_set(t.${ident(f.column)}, ${pathLiteral(f.path)}, to_jsonb(v.resealed))` : `${ident(f.column)} = v.resealed`;
  const current = f.path ? `t.${ident(f.column)} #>> ${pathLiteral(f.path)}` : `t.${ident(f.column)}`;
  await db.query('BEGIN');
  try {
    // call_attempts is append-only; its trigger lets the owner swap a note's ciphertext only here.
    await db.query(`SELECT set_config('app.key_rotation', 'on', true)`);
    const res = await db.query(
      `UPDATE ${ident(f.table)} AS t SET ${set}
         FROM unnest($1::uuid[], $2::text[], $3::text[]) AS v(id, sealed, resealed)
        WHERE t.id = v.id AND ${current} = v.sealed`,
      [rows.map((r) => r.id), rows.map((r) => r.sealed), rows.map((r) => r.resealed)],
    );
    await db.query('COMMIT');
    return res.rowCount ?? 0;
  } catch (err) {
    await db.query('ROLLBACK');
    throw err;
  }
}

/** How many stored values each key holds: a key id (v2), `v1` (before key ids) or `plain` (not a ciphertext). */
export async function keyCounts(db: Client, f: EncryptedField): Promise<{ key: string; count: number }[]> {
  const value = valueOf(f);
  const res = await db.query<{ key: string; count: number }>(
    `SELECT CASE WHEN ${value} LIKE 'v2.%' THEN split_part(${value}, '.', 2) WHEN ${value} LIKE 'v1.%' THEN 'v1' ELSE 'plain' END AS key,
            count(*)::int AS count
       FROM ${ident(f.table)} WHERE ${value} IS NOT NULL GROUP BY 1 ORDER BY 1`,
  );
  return res.rows;
}

/** Every `*_ciphertext` column of the schema, to check ENCRYPTED_FIELDS against. */
export async function ciphertextColumns(db: Client): Promise<string[]> {
  const res = await db.query<{ name: string }>(
    `SELECT table_name || '.' || column_name AS name FROM information_schema.columns
      WHERE table_schema = current_schema() AND column_name LIKE '%\\_ciphertext' ORDER BY 1`,
  );
  return res.rows.map((r) => r.name);
}
