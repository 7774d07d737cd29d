import { Client } from 'pg';

/**
 * Server settings the product relies on and never sets itself (docs/runbook.md, "PostgreSQL
 * sizing"). A start on a server that lacks one still runs, as a developer's machine may, but says
 * what it gives up, once, where an operator reads the start-up log.
 */
export interface ServerSettingWarning {
  setting: string;
  value: string;
  consequence: string;
}

interface Rule {
  setting: string;
  /** True when the value costs the product something. */
  lacking(value: string): boolean;
  consequence: string;
}

const RULES: Rule[] = [
  {
    setting: 'fsync',
    lacking: (v) => v === 'off',
    consequence: 'a crash of the server can lose or corrupt committed evidence of the calls and texts it allowed',
  },
  {
    setting: 'synchronous_commit',
    lacking: (v) => v === 'off',
    consequence: 'a decision answers before its evidence is durable: a crash can lose the proof of a call that was made',
  },
  {
    setting: 'full_page_writes',
    lacking: (v) => v === 'off',
    consequence: 'a crash mid-write can leave torn pages of the audit chain that recovery cannot repair',
  },
  {
    setting: 'autovacuum',
    lacking: (v) => v === 'off',
    consequence:
      'rows the product updates all day (leads, presence, campaign state) are never reclaimed, and planner statistics ' +
      'are refreshed only after debt imports: lead selection and history pages slow down as the tables grow',
  },
];

/** The warnings for these settings (name → value as pg_settings shows it). */
export function serverSettingWarnings(settings: Record<string, string>): ServerSettingWarning[] {
  return RULES.flatMap((rule) => {
    const value = settings[rule.setting];
    return value !== undefined && rule.lacking(value) ? [{ setting: rule.setting, value, consequence: rule.consequence }] : [];
  });
}

/**
 * Reads the settings as the given role sees them (a role's or database's own `SET` included, so
 * pass the application role's URL) and answers the warnings.
 */
export async function checkServerSettings(url: string): Promise<ServerSettingWarning[]> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ name: string; setting: string }>('SELECT name, setting FROM pg_settings WHERE name = ANY ($1::text[])', [
      RULES.map((r) => r.setting),
    ]);
    return serverSettingWarnings(Object.fromEntries(rows.map((r) => [r.name, r.setting])));
  } finally {
    await client.end();
  }
}
