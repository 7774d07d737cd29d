import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { FACT_PROVENANCE } from '../../src/modules/compliance/compliance.provenance';
import { FACTS_SQL } from '../../src/modules/compliance/compliance.repository';

const ROOT = path.resolve(__dirname, '../..');
const read = (file: string) => readFileSync(path.join(ROOT, file), 'utf8');
const camel = (snake: string) => snake.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
/** Prisma's model name for a table: debt_contacts → debtContact, compliance_policy_versions → compliancePolicyVersion. */
const model = (table: string) => camel(table.replace(/ies$/, 'y').replace(/s$/, ''));

/** The tables the facts query reads (its FROM and JOIN targets, the CTEs it defines excluded). */
function tablesRead(sql: string): string[] {
  const ctes = new Set([...sql.matchAll(/(?:WITH|,)\s*([a-z_]+)\s+AS\s*\(/gi)].map((m) => m[1]!.toLowerCase()));
  const read = [...sql.matchAll(/\b(?<!DISTINCT )(?:FROM|JOIN)\s+([a-z_]+)\b(?!\.)/gi)].map((m) => m[1]!.toLowerCase());
  return [...new Set(read.filter((t) => !ctes.has(t) && !['lateral', 'jsonb_to_recordset'].includes(t)))].sort();
}

function writes(text: string, table: string): boolean {
  const sqlWrite = new RegExp(`\\b(?:INSERT\\s+INTO|UPDATE)\\s+${table}\\b`, 'i').test(text);
  const prismaWrite = new RegExp(`\\.${model(table)}\\.(?:create|createMany|update|updateMany|upsert)\\(`).test(text);
  return sqlWrite || prismaWrite;
}

describe('every fact a gate reads has a production writer', () => {
  it('covers every table the facts query reads', () => {
    const covered = new Set(FACT_PROVENANCE.map((p) => p.table));
    const read = tablesRead(FACTS_SQL);
    expect(read.length).toBeGreaterThan(10);
    expect(read.filter((t) => !covered.has(t))).toEqual([]);
  });

  it('names only columns the facts query reads', () => {
    for (const p of FACT_PROVENANCE) {
      for (const column of p.columns) expect({ table: p.table, column, read: new RegExp(`\\b${column}\\b`).test(FACTS_SQL) }).toEqual({ table: p.table, column, read: true });
    }
  });

  it.each(FACT_PROVENANCE.map((p) => [p.fact, p] as const))('%s: written by product code that a real event reaches', (_fact, p) => {
    expect(p.writers.length).toBeGreaterThan(0);
    const texts: string[] = [];
    for (const w of p.writers) {
      expect(w.file).toMatch(/^(src|activities|workflows|workers)\//);
      expect(existsSync(path.join(ROOT, w.file))).toBe(true);
      const text = read(w.file);
      expect({ file: w.file, writes: writes(text, p.table) }).toEqual({ file: w.file, writes: true });
      texts.push(text);
      for (const r of w.reachedFrom ?? []) {
        expect(r.file).toMatch(/^(src|activities|workflows|workers)\//);
        const caller = read(r.file);
        expect({ file: r.file, calls: r.calls, found: caller.includes(r.calls) }).toEqual({ file: r.file, calls: r.calls, found: true });
        expect(text.includes(r.calls) || read(r.file).includes(r.calls)).toBe(true);
        texts.push(caller);
      }
    }
    const all = texts.join('\n');
    for (const column of p.columns) {
      expect({ column, written: all.includes(column) || all.includes(camel(column)) }).toEqual({ column, written: true });
    }
  });

  it('is the table docs/compliance-engine.md shows', () => {
    const doc = read('docs/compliance-engine.md');
    for (const p of FACT_PROVENANCE) {
      expect({ fact: p.fact, documented: doc.includes(`| ${p.fact} |`) }).toEqual({ fact: p.fact, documented: true });
      for (const w of p.writers) expect({ file: w.file, documented: doc.includes(`\`${w.file}\` | ${w.event} |`) }).toEqual({ file: w.file, documented: true });
    }
  });

  it('fails on a fact nothing writes', () => {
    expect(writes('SELECT * FROM conversations', 'conversations')).toBe(false);
    expect(writes('INSERT INTO conversations (id) VALUES (1)', 'conversations')).toBe(true);
    expect(writes('await tx.debtContact.update({})', 'debt_contacts')).toBe(true);
    expect(tablesRead('WITH x AS (SELECT 1 FROM a) SELECT * FROM x JOIN b ON true LEFT JOIN LATERAL (SELECT 1 FROM c) y ON true')).toEqual(['a', 'b', 'c']);
  });
});
