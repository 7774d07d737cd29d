import { dropDatabase } from '../../src/db/bootstrap';
import { prepareDatabase } from '../../src/db/migrate';

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
