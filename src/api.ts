import { runApiProcess } from './platform/api-process';

/** `npm run api`: one HTTP API process on its own (and the entry of `npm start`'s API processes). */
runApiProcess().catch((err: unknown) => {
  process.stderr.write(`api start-up failed: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
