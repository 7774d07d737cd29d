/**
 * `npm run switch:sim`: the FreeSWITCH event-socket simulator on its own, in the foreground until
 * SIGINT/SIGTERM. Environment: ESL_HOST (default 127.0.0.1), ESL_PORT (default 8021, FreeSWITCH's),
 * ESL_PASSWORD (default ClueCon), SIM_RING_MS, SIM_TALK_MS, SIM_AMD_MS, SIM_PROMPT_MS,
 * SIM_RECORDINGS_DIR, SIM_DIRECTORY_URL and SIM_DIRECTORY_CREDENTIALS (the product's switch directory
 * and its `user:password`: softphones register only through it, with `api sim_register ...`).
 */
import { startSwitchSimulator } from './server';

async function main(): Promise<void> {
  const rawPort = process.env.ESL_PORT?.trim();
  const port = rawPort ? Number(rawPort) : 8021;
  const sim = await startSwitchSimulator({
    host: process.env.ESL_HOST?.trim() || '127.0.0.1',
    port: Number.isInteger(port) && port >= 0 && port <= 65535 ? port : 8021,
    password: process.env.ESL_PASSWORD || 'ClueCon',
    recordingsDir: process.env.SIM_RECORDINGS_DIR?.trim() || undefined,
  });
  process.stdout.write(
    `switch simulator (FreeSWITCH event socket) listening on ${sim.host}:${sim.port}\n` +
      `  connect any ESL client, e.g. fs_cli -H ${sim.host} -P ${sim.port} -p <ESL_PASSWORD>\n`,
  );
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    process.stdout.write(`${signal}: stopping the switch simulator\n`);
    sim.stop().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
}

main().catch((err: unknown) => {
  process.stderr.write(`switch simulator failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
