import { randomUUID } from 'node:crypto';
import type { AppDeps } from '../../deps';
import { sha256Of, type ActorType, appendAuditSql } from '../../lib/audit';
import { withTenantSql } from '../../lib/tenancy';
import { wakeCampaignRuns } from '../dialer/campaign-wake';
import {
  addPriorAttempts,
  debtIdsByRef,
  demotePrimaries,
  existingCampaignIds,
  grantImportConsents,
  insertNewDebts,
  lockTenantImports,
  reclassifyNumbers,
  refreshImportStatistics,
  storedVerification,
  updateExistingDebts,
  upsertContacts,
  type ContactRow,
  type DebtRow,
  type StoredVerification,
} from './debt-import.repository';
import { validateImportItem, type ImportDebt } from './debt-import.validate';

type Actor = { type: ActorType; id: string | null };

export interface ImportResult {
  imported: number;
  failed: { index: number; error: string }[];
}

interface Accepted {
  index: number;
  item: ImportDebt;
}

/** Each write-only verification field and the column holding its ciphertext. */
const VERIFICATION = [
  ['dob', 'verify_dob_ciphertext'],
  ['ssn_last4', 'verify_ssn_last4_ciphertext'],
  ['pin', 'verify_pin_ciphertext'],
] as const;

type Sealed = Partial<Record<(typeof VERIFICATION)[number][1], string>>;

/** Whether `sealed` holds `plaintext`; a ciphertext the key cannot open counts as a different value. */
function holds(box: AppDeps['box'], sealed: string | null, plaintext: string): boolean {
  if (sealed === null) return false;
  try {
    return box.decrypt(sealed) === plaintext;
  } catch {
    return false;
  }
}

/**
 * The verification ciphertexts to write for one item: only the given values that differ from what
 * is stored (a fresh ciphertext of the same value would differ, so a replay would rewrite the row).
 */
function seal(box: AppDeps['box'], item: ImportDebt, stored: StoredVerification | undefined): Sealed {
  const sealed: Sealed = {};
  for (const [field, column] of VERIFICATION) {
    const plaintext = item[field];
    if (plaintext === undefined || holds(box, stored?.[column] ?? null, plaintext)) continue;
    sealed[column] = box.encrypt(plaintext);
  }
  return sealed;
}

/**
 * POST /v1/debts/import. Every item is validated on its own (a bad item fails alone, with a message
 * naming its field); the accepted ones are written set-based, a handful of statements for the whole
 * batch, in one tenant transaction with one audit row. Replaying a request gives the same stored
 * state and the same answer.
 */
export async function importDebts(deps: AppDeps, tenantId: string, actor: Actor, body: { debts: unknown[] }): Promise<ImportResult> {
  const errors = new Map<number, string>();
  const candidates: Accepted[] = [];
  body.debts.forEach((raw, index) => {
    const result = validateImportItem(raw);
    if (result.ok) candidates.push({ index, item: result.item });
    else errors.set(index, result.error);
  });
  const importId = randomUUID();
  const bodySha256 = sha256Of(JSON.stringify(body));

  const outcome = await withTenantSql(deps.db, tenantId, async (sql) => {
    await lockTenantImports(sql, tenantId);

    const campaignIds = [...new Set(candidates.flatMap((c) => (c.item.campaign_id ? [c.item.campaign_id] : [])))];
    const campaigns = await existingCampaignIds(sql, tenantId, campaignIds);
    const claimed = new Map<string, number>();
    const accepted: Accepted[] = [];
    for (const c of candidates) {
      if (c.item.campaign_id && !campaigns.has(c.item.campaign_id)) {
        errors.set(c.index, `field 'campaign_id': no campaign with this id`);
        continue;
      }
      const first = claimed.get(c.item.external_ref);
      if (first !== undefined) {
        errors.set(c.index, `field 'external_ref': duplicate of the item at index ${first} in this request`);
        continue;
      }
      claimed.set(c.item.external_ref, c.index);
      accepted.push(c);
    }

    let created = 0;
    let updated = 0;
    let contactsWritten = 0;
    let consentsGranted = 0;
    let consentDatesSet = 0;
    let numbersReclassified = 0;
    let priorAttemptsAdded = 0;
    if (accepted.length > 0) {
      const verifying = accepted.filter(({ item }) => VERIFICATION.some(([field]) => item[field] !== undefined));
      const stored = new Map((await storedVerification(sql, tenantId, verifying.map((a) => a.item.external_ref))).map((r) => [r.external_ref, r]));
      const debtRows: DebtRow[] = accepted.map(({ index, item }) => {
        const { contacts: _contacts, prior_attempts_7d: _prior, dob: _dob, ssn_last4: _ssn, pin: _pin, ...fields } = item;
        return { i: index, ...fields, ...seal(deps.box, item, stored.get(item.external_ref)) };
      });
      const inserted = await insertNewDebts(sql, tenantId, debtRows);
      created = inserted.length;
      const idByRef = new Map(inserted.map((r) => [r.external_ref, r.id]));
      const isNew = new Set(idByRef.keys());
      if (inserted.length < accepted.length) {
        const existing = debtRows.filter((d) => !isNew.has(d.external_ref));
        updated = (await updateExistingDebts(sql, tenantId, existing)).length;
        for (const r of await debtIdsByRef(sql, tenantId, existing.map((d) => d.external_ref))) idByRef.set(r.external_ref, r.id);
      }

      const contacts: ContactRow[] = [];
      const primaries: { debt_id: string; phone_e164: string }[] = [];
      const reports: { debt_id: string; n: number }[] = [];
      for (const { index, item } of accepted) {
        const debtId = idByRef.get(item.external_ref);
        if (!debtId) throw new Error(`debt import: no id for a written debt (index ${index})`);
        const debtIsNew = isNew.has(item.external_ref);
        const namesPrimary = item.contacts.some((c) => c.is_primary);
        item.contacts.forEach((contact, pos) => {
          contacts.push({
            ord: contacts.length,
            idx: index,
            debt_id: debtId,
            ...contact,
            fallback: pos === 0 && !namesPrimary,
            is_new: debtIsNew,
          });
          if (contact.is_primary && !debtIsNew) primaries.push({ debt_id: debtId, phone_e164: contact.phone_e164 });
        });
        if (item.prior_attempts_7d) reports.push({ debt_id: debtId, n: item.prior_attempts_7d });
      }
      if (contacts.length > 0) {
        await demotePrimaries(sql, tenantId, primaries);
        const contactsJson = JSON.stringify(contacts);
        contactsWritten = await upsertContacts(sql, tenantId, contactsJson);
        numbersReclassified = await reclassifyNumbers(sql, tenantId, contactsJson);
        const consents = await grantImportConsents(sql, tenantId, contactsJson, importId);
        consentsGranted = consents.granted;
        consentDatesSet = consents.dated;
      }
      priorAttemptsAdded = await addPriorAttempts(sql, tenantId, reports);
    }

    const failed = [...errors.entries()].sort((a, b) => a[0] - b[0]).map(([index, error]) => ({ index, error }));
    await appendAuditSql(sql, tenantId, [{
      actorType: actor.type,
      actorId: actor.id,
      action: 'debts.imported',
      subjectType: 'debt_import',
      subjectId: importId,
      payload: {
        import_id: importId,
        body_sha256: bodySha256,
        items: body.debts.length,
        imported: accepted.length,
        failed: failed.length,
        debts_created: created,
        debts_updated: updated,
        contacts_written: contactsWritten,
        consents_granted: consentsGranted,
        consent_dates_set: consentDatesSet,
        numbers_reclassified: numbersReclassified,
        prior_attempts_added: priorAttemptsAdded,
      },
    }]);
    return { result: { imported: accepted.length, failed }, created };
  });
  // After commit: the statistics must see the new rows, and the owner-side ANALYZE is a no-op
  // until the imports since the last one have grown the tables by a tenth, or this import is a tenth
  // of what the statistics estimate for a tenant that holds 100 debts or more.
  if (outcome.created > 0) await refreshImportStatistics(deps.db.pool, outcome.created, tenantId);
  await wakeCampaignRuns(deps, tenantId, candidates.flatMap((c) => (c.item.campaign_id ? [c.item.campaign_id.toLowerCase()] : [])));
  return outcome.result;
}
