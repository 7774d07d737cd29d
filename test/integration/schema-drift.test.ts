import { readFileSync } from 'node:fs';
import path from 'node:path';
import { getDMMF } from '@prisma/internals';
import { Client } from 'pg';
import { loadConfig, ROOT_DIR } from '../../src/config';
import { testEnv } from '../helpers/harness';

/**
 * prisma/schema.prisma is hand-written against the SQL migrations (the source of truth). This
 * compares every model with its migrated table: each scalar field has a column of the matching
 * type and nullability, each column of a mapped table has a field, primary keys agree and every
 * model-level unique exists in the database. Tables no model maps are drift too.
 */

type Dmmf = Awaited<ReturnType<typeof getDMMF>>;
type Model = Dmmf['datamodel']['models'][number];
type Field = Model['fields'][number];

interface Column {
  table: string;
  column: string;
  dataType: string;
  udtName: string;
  nullable: boolean;
  charMaxLength: number | null;
  numericPrecision: number | null;
  numericScale: number | null;
  datetimePrecision: number | null;
}

export interface DbSchema {
  columns: Column[];
  /** table -> primary key columns in key order */
  primaryKeys: Map<string, string[]>;
  /** table -> column lists of unique indexes/constraints (plain columns only) */
  uniques: Map<string, string[][]>;
  /** base tables of the schema (partitions excluded) */
  tables: string[];
}

/** Tables that are not Prisma models on purpose. */
const TABLES_WITHOUT_MODEL = new Set(['_prisma_migrations']);

const SCHEMA_PATH = path.join(ROOT_DIR, 'prisma', 'schema.prisma');

const columnName = (f: Field) => f.dbName ?? f.name;
const tableName = (m: Model) => m.dbName ?? m.name;

interface ExpectedType {
  dataType: string;
  udtName?: string;
  charMaxLength?: number | null;
  numeric?: [number, number];
  datetimePrecision?: number;
}

/** The PostgreSQL column type Prisma expects for a scalar or enum field. */
export function expectedType(field: Field, enums: Map<string, string>): ExpectedType | string {
  const native = field.nativeType as [string, string[]] | null | undefined;
  const nativeName = native?.[0] ?? null;
  const args = (native?.[1] ?? []).map(Number);
  let t: ExpectedType | string;
  if (field.kind === 'enum') {
    t = { dataType: 'USER-DEFINED', udtName: enums.get(field.type) ?? field.type };
  } else {
    switch (field.type) {
      case 'String':
        if (!nativeName || nativeName === 'Text') t = { dataType: 'text' };
        else if (nativeName === 'Uuid') t = { dataType: 'uuid' };
        else if (nativeName === 'VarChar') t = { dataType: 'character varying', charMaxLength: args[0] ?? null };
        else if (nativeName === 'Char') t = { dataType: 'character', charMaxLength: args[0] ?? 1 };
        else if (nativeName === 'Citext') t = { dataType: 'USER-DEFINED', udtName: 'citext' };
        else if (nativeName === 'Inet') t = { dataType: 'inet' };
        else t = `unmapped String native type ${nativeName}`;
        break;
      case 'Int':
        t = nativeName === 'SmallInt' ? { dataType: 'smallint' } : nativeName && nativeName !== 'Integer' ? `unmapped Int native type ${nativeName}` : { dataType: 'integer' };
        break;
      case 'BigInt':
        t = { dataType: 'bigint' };
        break;
      case 'Boolean':
        t = { dataType: 'boolean' };
        break;
      case 'Float':
        t = nativeName === 'Real' ? { dataType: 'real' } : { dataType: 'double precision' };
        break;
      case 'Decimal':
        t = { dataType: 'numeric', numeric: nativeName === 'Decimal' ? [args[0]!, args[1]!] : [65, 30] };
        break;
      case 'DateTime':
        if (!nativeName) t = { dataType: 'timestamp without time zone', datetimePrecision: 3 };
        else if (nativeName === 'Timestamptz') t = { dataType: 'timestamp with time zone', datetimePrecision: args[0] ?? 6 };
        else if (nativeName === 'Timestamp') t = { dataType: 'timestamp without time zone', datetimePrecision: args[0] ?? 6 };
        else if (nativeName === 'Date') t = { dataType: 'date' };
        else if (nativeName === 'Time') t = { dataType: 'time without time zone', datetimePrecision: args[0] ?? 6 };
        else if (nativeName === 'Timetz') t = { dataType: 'time with time zone', datetimePrecision: args[0] ?? 6 };
        else t = `unmapped DateTime native type ${nativeName}`;
        break;
      case 'Json':
        t = nativeName === 'Json' ? { dataType: 'json' } : { dataType: 'jsonb' };
        break;
      case 'Bytes':
        t = { dataType: 'bytea' };
        break;
      default:
        t = `unmapped Prisma type ${field.type}`;
    }
  }
  if (typeof t === 'string' || !field.isList) return t;
  // Arrays: information_schema says ARRAY and names the element type in udt_name with a leading _.
  const elementUdt: Record<string, string> = {
    text: 'text', uuid: 'uuid', 'character varying': 'varchar', integer: 'int4', smallint: 'int2', bigint: 'int8',
    boolean: 'bool', 'double precision': 'float8', real: 'float4', numeric: 'numeric', jsonb: 'jsonb', json: 'json',
    'timestamp with time zone': 'timestamptz', 'timestamp without time zone': 'timestamp', date: 'date', bytea: 'bytea',
  };
  const element = t.dataType === 'USER-DEFINED' ? t.udtName! : elementUdt[t.dataType] ?? t.dataType;
  return { dataType: 'ARRAY', udtName: `_${element}` };
}

function describeColumn(c: Column): string {
  const parts = [c.dataType === 'USER-DEFINED' || c.dataType === 'ARRAY' ? `${c.dataType}(${c.udtName})` : c.dataType];
  if (c.charMaxLength !== null) parts.push(`len ${c.charMaxLength}`);
  if (c.dataType === 'numeric') parts.push(`(${c.numericPrecision},${c.numericScale})`);
  if (c.datetimePrecision !== null && c.dataType.includes('time')) parts.push(`precision ${c.datetimePrecision}`);
  return parts.join(' ');
}

/** Every disagreement between the Prisma models and the database, as readable lines (empty = none). */
export function compareSchema(dmmf: Dmmf['datamodel'], db: DbSchema): string[] {
  const problems: string[] = [];
  const enums = new Map(dmmf.enums.map((e) => [e.name, e.dbName ?? e.name]));
  const byTable = new Map<string, Column[]>();
  for (const c of db.columns) byTable.set(c.table, [...(byTable.get(c.table) ?? []), c]);
  const mapped = new Set<string>();

  for (const model of dmmf.models) {
    const table = tableName(model);
    mapped.add(table);
    const columns = byTable.get(table);
    if (!columns) {
      problems.push(`model ${model.name}: table ${table} does not exist`);
      continue;
    }
    const scalarFields = model.fields.filter((f) => f.kind === 'scalar' || f.kind === 'enum');
    const fieldColumns = new Set<string>();
    for (const field of model.fields) {
      if (field.kind === 'object') continue;
      const where = `${model.name}.${field.name} (${table}.${columnName(field)})`;
      if (field.kind === 'unsupported') {
        problems.push(`${where}: Unsupported field type cannot be checked`);
        continue;
      }
      fieldColumns.add(columnName(field));
      const column = columns.find((c) => c.column === columnName(field));
      if (!column) {
        problems.push(`${where}: no such column`);
        continue;
      }
      if (field.isRequired === column.nullable) {
        problems.push(`${where}: model says ${field.isRequired ? 'required' : 'optional'}, column is ${column.nullable ? 'NULL' : 'NOT NULL'}`);
      }
      const want = expectedType(field, enums);
      if (typeof want === 'string') {
        problems.push(`${where}: ${want}`);
        continue;
      }
      const typeOk =
        column.dataType === want.dataType &&
        (want.udtName === undefined || column.udtName === want.udtName) &&
        (want.charMaxLength === undefined || column.charMaxLength === want.charMaxLength) &&
        (want.numeric === undefined || (column.numericPrecision === want.numeric[0] && column.numericScale === want.numeric[1])) &&
        (want.datetimePrecision === undefined || column.datetimePrecision === want.datetimePrecision);
      if (!typeOk) {
        const wanted = [want.dataType, want.udtName && `(${want.udtName})`, want.charMaxLength != null && `len ${want.charMaxLength}`, want.numeric && `(${want.numeric.join(',')})`, want.datetimePrecision !== undefined && `precision ${want.datetimePrecision}`]
          .filter(Boolean)
          .join(' ');
        problems.push(`${where}: model ${field.type}${field.nativeType ? ` @db.${field.nativeType[0]}` : ''} wants ${wanted}, column is ${describeColumn(column)}`);
      }
    }
    for (const column of columns) {
      if (!fieldColumns.has(column.column)) problems.push(`table ${table}.${column.column}: no field in model ${model.name}`);
    }

    const modelPk = model.primaryKey
      ? model.primaryKey.fields.map((name) => columnName(model.fields.find((f) => f.name === name)!))
      : scalarFields.filter((f) => f.isId).map(columnName);
    const dbPk = db.primaryKeys.get(table) ?? [];
    if (modelPk.join(',') !== dbPk.join(',')) {
      problems.push(`model ${model.name}: primary key (${modelPk.join(', ')}) but table ${table} has (${dbPk.join(', ')})`);
    }

    const dbUniques = (db.uniques.get(table) ?? []).map((cols) => [...cols].sort().join(','));
    const modelUniques = [
      ...scalarFields.filter((f) => f.isUnique).map((f) => [columnName(f)]),
      ...model.uniqueFields.map((names) => names.map((n) => columnName(model.fields.find((f) => f.name === n)!))),
    ];
    for (const cols of modelUniques) {
      if (!dbUniques.includes([...cols].sort().join(','))) {
        problems.push(`model ${model.name}: unique (${cols.join(', ')}) has no unique index or constraint on ${table}`);
      }
    }
  }

  for (const table of db.tables) {
    if (!mapped.has(table) && !TABLES_WITHOUT_MODEL.has(table)) problems.push(`table ${table}: no Prisma model maps it`);
  }
  return problems;
}

async function readDbSchema(client: Client): Promise<DbSchema> {
  const columns = await client.query<{
    table_name: string; column_name: string; data_type: string; udt_name: string; is_nullable: string;
    character_maximum_length: number | null; numeric_precision: number | null; numeric_scale: number | null; datetime_precision: number | null;
  }>(
    `SELECT c.table_name, c.column_name, c.data_type, c.udt_name, c.is_nullable, c.character_maximum_length,
            c.numeric_precision, c.numeric_scale, c.datetime_precision
       FROM information_schema.columns c
       JOIN pg_class k ON k.relname = c.table_name
       JOIN pg_namespace n ON n.oid = k.relnamespace AND n.nspname = c.table_schema
      WHERE c.table_schema = 'public' AND k.relkind IN ('r', 'p') AND NOT k.relispartition
      ORDER BY c.table_name, c.ordinal_position`,
  );
  const tables = await client.query<{ relname: string }>(
    `SELECT k.relname FROM pg_class k JOIN pg_namespace n ON n.oid = k.relnamespace
      WHERE n.nspname = 'public' AND k.relkind IN ('r', 'p') AND NOT k.relispartition ORDER BY 1`,
  );
  // Unique and primary-key indexes on plain columns (expression indexes such as lower(name) are skipped).
  const indexes = await client.query<{ table: string; is_primary: boolean; columns: string[] }>(
    `SELECT t.relname AS table, i.indisprimary AS is_primary,
            array_agg(a.attname ORDER BY k.ord)::text[] AS columns
       FROM pg_index i
       JOIN pg_class t ON t.oid = i.indrelid
       JOIN pg_namespace n ON n.oid = t.relnamespace AND n.nspname = 'public'
       CROSS JOIN LATERAL unnest(i.indkey) WITH ORDINALITY AS k(attnum, ord)
       JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.attnum
      WHERE i.indisunique AND i.indpred IS NULL AND i.indexprs IS NULL
      GROUP BY t.relname, i.indexrelid, i.indisprimary`,
  );
  const primaryKeys = new Map<string, string[]>();
  const uniques = new Map<string, string[][]>();
  for (const ix of indexes.rows) {
    if (ix.is_primary) primaryKeys.set(ix.table, ix.columns);
    uniques.set(ix.table, [...(uniques.get(ix.table) ?? []), ix.columns]);
  }
  return {
    columns: columns.rows.map((r) => ({
      table: r.table_name,
      column: r.column_name,
      dataType: r.data_type,
      udtName: r.udt_name,
      nullable: r.is_nullable === 'YES',
      charMaxLength: r.character_maximum_length,
      numericPrecision: r.numeric_precision,
      numericScale: r.numeric_scale,
      datetimePrecision: r.datetime_precision,
    })),
    primaryKeys,
    uniques,
    tables: tables.rows.map((r) => r.relname),
  };
}

describe('schema drift: prisma/schema.prisma vs the migrated database', () => {
  let client: Client;
  let db: DbSchema;
  let schemaText: string;
  let dmmf: Dmmf['datamodel'];

  const dmmfOf = async (datamodel: string) => (await getDMMF({ datamodel })).datamodel;
  /** Replaces exactly one occurrence, so a test never silently alters nothing. */
  const alter = (from: string | RegExp, to: string) => {
    const matches = schemaText.match(new RegExp(typeof from === 'string' ? from.replace(/[.*+?^${}()|[\]\\]/g, '\\$&') : from.source, 'g'));
    expect(matches).toHaveLength(1);
    return schemaText.replace(from, to);
  };

  beforeAll(async () => {
    client = new Client({ connectionString: loadConfig(testEnv()).ownerDatabaseUrl });
    await client.connect();
    db = await readDbSchema(client);
    schemaText = readFileSync(SCHEMA_PATH, 'utf8');
    dmmf = await dmmfOf(schemaText);
  });
  afterAll(async () => {
    await client.end();
  });

  it('reads a real schema (not vacuous)', () => {
    expect(dmmf.models.length).toBeGreaterThanOrEqual(9);
    expect(db.tables).toEqual(expect.arrayContaining(['tenants', 'users', 'audit_log', 'rate_limits', '_prisma_migrations']));
    expect(db.columns.filter((c) => c.table === 'tenants').length).toBeGreaterThan(20);
  });

  it('every model matches its table and every table has a model', () => {
    expect(compareSchema(dmmf, db)).toEqual([]);
  });

  describe('the comparison can fail', () => {
    it.each([
      ['a type change', /(\n\s+seats\s+)Int(\s)/, '$1BigInt$2', /Tenant\.seats \(tenants\.seats\): model BigInt wants bigint, column is integer/],
      ['a nullability change (required -> optional)', /(\n\s+accountId\s+)String(\s+@map\("account_id"\) @db\.Uuid\n\s+name\s)/, '$1String?$2', /Tenant\.accountId \(tenants\.account_id\): model says optional, column is NOT NULL/],
      ['a nullability change (optional -> required)', /(\n\s+lastLoginAt\s+)DateTime\?/, '$1DateTime ', /User\.lastLoginAt \(users\.last_login_at\): model says required, column is NULL/],
      ['a native type change (uuid -> text)', /(\n\s+tenantId\s+String\s+@map\("tenant_id"\)) @db\.Uuid(\n\s+label)/, '$1$2', /ApiKey\.tenantId \(api_keys\.tenant_id\): model String wants text, column is uuid/],
      ['a timestamptz dropped', /(\n\s+suspendedAt\s+DateTime\?\s+@map\("suspended_at"\)) @db\.Timestamptz\(3\)/, '$1', /Tenant\.suspendedAt .*wants timestamp without time zone precision 3, column is timestamp with time zone precision 3/],
      ['a decimal scale change', /(aiMonthlyBudgetUsd\s+Decimal\?\s+@map\("ai_monthly_budget_usd"\) @db\.Decimal\(14, )2\)/, '$14)', /Tenant\.aiMonthlyBudgetUsd .*wants numeric \(14,4\), column is numeric \(14,2\)/],
      ['a varchar length change', /@db\.VarChar\(255\)/, '@db.VarChar(100)', /RateLimit\.key \(rate_limits\.key\): .*len 100, column is character varying len 255/],
      ['a field without a column', /(\n\s+hash\s+String\n)/, '$1  extra String\n', /AuditLog\.extra \(audit_log\.extra\): no such column/],
      ['a wrong @map', /@map\("body_ciphertext"\)/, '@map("body_cipher")', /MailOutbox\.bodyCiphertext \(mail_outbox\.body_cipher\): no such column[\s\S]*table mail_outbox\.body_ciphertext: no field in model MailOutbox/],
      ['a column without a field', /\n\s+taxPostalCode\s+String\?\s+@map\("tax_postal_code"\)\n/, '\n', /table tenants\.tax_postal_code: no field in model Tenant/],
      ['a model for a missing table', /@@map\("agents"\)/, '@@map("agent")', /model Agent: table agent does not exist[\s\S]*table agents: no Prisma model maps it/],
      ['a unique the database does not have', /(\n\s+name\s+String\s+@default\(""\))/, '$1 @unique', /model User: unique \(name\) has no unique index/],
    ])('reports %s', async (_label, from, to, expected) => {
      const altered = await dmmfOf(alter(from, to));
      const problems = compareSchema(altered, db);
      expect(problems.join('\n')).toMatch(expected);
    });

    it('reports a column the database has and the model lacks, when added by SQL', () => {
      const extra: DbSchema = {
        ...db,
        columns: [...db.columns, { ...db.columns.find((c) => c.table === 'users' && c.column === 'name')!, column: 'nickname' }],
      };
      expect(compareSchema(dmmf, extra)).toEqual(['table users.nickname: no field in model User']);
    });

    it('reports a column whose nullability changed in the database', () => {
      const changed: DbSchema = {
        ...db,
        columns: db.columns.map((c) => (c.table === 'agents' && c.column === 'email' ? { ...c, nullable: true } : c)),
      };
      expect(compareSchema(dmmf, changed)).toEqual(['Agent.email (agents.email): model says required, column is NULL']);
    });
  });
});
