import { Client } from 'pg';
import { prepareDatabase } from '../../src/db/migrate';

async function dropDatabase(url: string): Promise<void> {
  const maintenance = new URL(url);
  maintenance.pathname = '/postgres';
  const client = new Client({ connectionString: maintenance.toString() });
  await client.connect();
  try {
    await client.query(`DROP DATABASE IF EXISTS "${new URL(url).pathname.slice(1)}" WITH (FORCE)`);
  } finally {
    await client.end();
  }
}

export interface PrivateDatabase {
  url: string;
  drop(): Promise<void>;
}

/**
 * A database of one test file's own, migrated from nothing: the shared test database's name plus
 * `suffix`. For files whose cross-tenant loops (the webhook dispatcher, the billing pass) must see
 * only their own rows.
 */
export async function privateDatabase(suffix: string): Promise<PrivateDatabase> {
  const url = new URL(process.env.TEST_DATABASE_URL!);
  url.pathname = `${url.pathname}_${suffix}`;
  const database = { url: url.toString(), drop: () => dropDatabase(url.toString()) };
  await database.drop();
  await prepareDatabase(database.url);
  return database;
}
