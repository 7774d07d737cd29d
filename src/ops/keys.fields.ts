/**
 * Every place a CryptoBox ciphertext is stored, as data: `keys rotate` and `keys status` walk this
 * list, and test/integration/ops-keys.test.ts fails when a `*_ciphertext` column exists that it
 * does not name. A new encrypted column is one more line here.
 */
export interface EncryptedField {
  table: string;
  /** The column holding the ciphertext, or the jsonb column holding it at `path`. */
  column: string;
  /** For a jsonb column: the keys leading to the ciphertext string (`#>>` path). */
  path?: readonly string[];
}

export const ENCRYPTED_FIELDS: readonly EncryptedField[] = [
  { table: 'mail_outbox', column: 'body_ciphertext' },
  { table: 'call_attempts', column: 'note_ciphertext' },
  { table: 'webhook_endpoints', column: 'secret_ciphertext' },
  { table: 'webhook_endpoints', column: 'previous_secret_ciphertext' },
  { table: 'sms_providers', column: 'webhook_secret_ciphertext' },
  { table: 'sms_providers', column: 'api_key_ciphertext' },
  { table: 'agent_sip_credentials', column: 'password_ciphertext' },
  { table: 'debts', column: 'verify_dob_ciphertext' },
  { table: 'debts', column: 'verify_ssn_last4_ciphertext' },
  { table: 'debts', column: 'verify_pin_ciphertext' },
  // The expected answer of the AI verification factor, sealed inside the stored engine state.
  { table: 'ai_conversations', column: 'engine_state', path: ['state', 'verification', 'expected'] },
];

/** `table.column` or `table.column#>{a,b}`, as reports name a field. */
export function fieldName(f: EncryptedField): string {
  return f.path ? `${f.table}.${f.column}#>{${f.path.join(',')}}` : `${f.table}.${f.column}`;
}
