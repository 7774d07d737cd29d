import { DefaultLogger, Runtime } from '@temporalio/worker';
import { loadConfig } from '../config';
import { createOpsContext, type OpsContext } from './context';
import { processIo } from './output';
import { runCli } from './program';

/** `npm run ops -- <command>`: one command, then every connection is closed and the exit code set. */
async function main(): Promise<number> {
  // The replayer's SDK runtime would otherwise log bundling progress on stdout and spoil --json.
  Runtime.install({ logger: new DefaultLogger('ERROR') });
  const config = loadConfig();
  const opened: OpsContext[] = [];
  try {
    return await runCli(process.argv.slice(2), {
      io: processIo,
      staleSeconds: config.RECORDING_EXPORT_CLAIM_STALE_SECONDS,
      context: async () => {
        if (!opened[0]) opened.push(await createOpsContext());
        return opened[0]!;
      },
    });
  } finally {
    await opened[0]?.close();
  }
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`failed: ${(err as Error).message}\n`);
    process.exitCode = 1;
  },
);
