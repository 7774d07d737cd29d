import { loadConfig } from '../config';
import { prepareDatabase } from './migrate';

async function main(): Promise<void> {
  const config = loadConfig();
  const result = await prepareDatabase(config.ownerDatabaseUrl);
  const applied = result.applied.length ? result.applied.join(', ') : 'none';
  process.stdout.write(`migrations applied: ${applied} (already applied: ${result.alreadyApplied})\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`migrate failed: ${(err as Error).message}\n`);
  process.exitCode = 1;
});
