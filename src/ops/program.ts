import { Command, CommanderError, Option } from 'commander';
import { AppError } from '../lib/errors';
import type { OpsContext } from './context';
import { listCampaignRuns, replayCampaignRun, resetCampaignRun, showCampaignRun, transitionCampaignRun, type LifecycleCommand } from './campaigns.commands';
import { renderDeadLetters, renderDetail, renderKeyStatus, renderRedeliver, renderReplay, renderReset, renderRotation, renderRuns, renderStuckExports, renderTransition } from './render';
import { keyStatus, rotateKeys } from './keys.commands';
import { listStuckExports } from './exports.commands';
import { maskPhones, OpsRefusal, positiveIntArg, toJson, UsageError, uuidArg, type Io } from './output';
import { listDeadLetters, redeliverDeadLetter } from './webhooks.commands';

export interface CliEnv {
  io: Io;
  /** Opened on the first command that needs it (never for --help); the caller closes it. */
  context: () => Promise<OpsContext>;
  /** RECORDING_EXPORT_CLAIM_STALE_SECONDS, the default of `exports stuck --older-than`. */
  staleSeconds: number;
}

const EXIT_OK = 0;
const EXIT_REFUSED = 1;
const EXIT_USAGE = 2;

const examples = (...lines: string[]) => `\nExamples:\n${lines.map((l) => `  $ npm run ops -- ${l}`).join('\n')}\n`;

function buildProgram(env: CliEnv): Command {
  const program = new Command('ops')
    .description('Operator CLI: inspect and steer campaign runs, webhook dead letters and stuck recording exports; rotate the encryption key.')
    .option('--json', 'machine-readable JSON on stdout instead of tables')
    .exitOverride()
    .configureOutput({ writeOut: (s) => env.io.out(s), writeErr: (s) => env.io.err(s) })
    .showHelpAfterError('(add --help for usage)')
    .addHelpText(
      'after',
      `\nExit codes: 0 done, 1 refused or failed (one-line reason on stderr), 2 usage error.
Configuration comes from the API's environment (DATABASE_URL, TEMPORAL_ADDRESS, ...); OPS_ACTOR names you in the audit log.
${examples('campaigns list', 'campaigns list --json')}`,
    );

  /**
   * A command's action: `body` checks the arguments (a UsageError, before anything connects) and
   * returns the work to run against the context; its data is printed masked, as JSON or through
   * the human renderer.
   */
  const run =
    <A extends unknown[], T>(body: (...args: A) => (ctx: OpsContext) => Promise<T>, render: (data: T) => string) =>
    async (...args: A) => {
      const work = body(...args);
      const data = maskPhones(await work(await env.context()));
      env.io.out(program.opts<{ json?: boolean }>().json ? toJson(data) : render(data));
    };

  const campaigns = program.command('campaigns').description('Campaign runs (Temporal workflows campaign-run:<tenant>:<campaign>)');

  campaigns
    .command('list')
    .description('List campaign-run workflows from Temporal visibility (search attributes TenantId, CampaignId) with their campaign rows')
    .option('--tenant <id>', 'only this tenant')
    .option('--campaign <id>', 'only this campaign')
    .addOption(new Option('--status <status>', 'running runs only, or every run visibility still holds').choices(['running', 'all']).default('running'))
    .option('--limit <n>', 'at most this many runs', '100')
    .addHelpText('after', examples('campaigns list', 'campaigns list --tenant <tenant> --status all', 'campaigns list --campaign <campaign> --json'))
    .action(
      run(
        (o: { tenant?: string; campaign?: string; status: 'running' | 'all'; limit: string }) => {
          const args = {
            tenant: o.tenant === undefined ? undefined : uuidArg('--tenant', o.tenant),
            campaign: o.campaign === undefined ? undefined : uuidArg('--campaign', o.campaign),
            status: o.status,
            limit: positiveIntArg('--limit', o.limit),
          };
          return (ctx) => listCampaignRuns(ctx, args);
        },
        renderRuns,
      ),
    );

  campaigns
    .command('show')
    .description("One campaign's run: status, start, history length, pending activities, the runState and stats queries, the campaign row")
    .argument('<tenant>', 'tenant id')
    .argument('<campaign>', 'campaign id')
    .addHelpText('after', examples('campaigns show <tenant> <campaign>', 'campaigns show <tenant> <campaign> --json'))
    .action(run((t: string, c: string) => {
      const [tenant, campaign] = [uuidArg('tenant', t), uuidArg('campaign', c)];
      return (ctx) => showCampaignRun(ctx, tenant, campaign);
    }, renderDetail));

  const lifecycle: Record<LifecycleCommand, string> = {
    pause: 'Pause the campaign exactly as POST /v1/campaigns/{id}/pause does (state paused, audit entry, pause signal); calls in flight finish',
    resume: 'Resume the campaign exactly as POST /v1/campaigns/{id}/resume does (state running, audit entry, signal-with-start of the run)',
    stop: 'Stop the campaign exactly as POST /v1/campaigns/{id}/stop does (state completed, terminal; the run ends)',
  };
  for (const verb of ['pause', 'resume', 'stop'] as const) {
    campaigns
      .command(verb)
      .description(`${lifecycle[verb]}. Audited with actor type operator (OPS_ACTOR).`)
      .argument('<tenant>', 'tenant id')
      .argument('<campaign>', 'campaign id')
      .option('--reason <text>', 'why; kept in an extra audit entry ops.campaign.' + verb)
      .addHelpText('after', examples(`campaigns ${verb} <tenant> <campaign> --reason "<why>"`))
      .action(
        run(
          (t: string, c: string, o: { reason?: string }) => {
            const [tenant, campaign] = [uuidArg('tenant', t), uuidArg('campaign', c)];
            return (ctx) => transitionCampaignRun(ctx, verb, tenant, campaign, o.reason);
          },
          renderTransition,
        ),
      );
  }

  campaigns
    .command('reset')
    .description(
      "Temporal workflow reset of the campaign's current run. last-healthy (the default) is the last WorkflowTaskCompleted before " +
        "the run's first failure event (workflow task failed or timed out, activity failed or timed out), or the last one when it never " +
        'failed. Signals after the point are re-applied. Prints the new run id; audited as campaign.run_reset.',
    )
    .argument('<tenant>', 'tenant id')
    .argument('<campaign>', 'campaign id')
    .option('--to <point>', "'last-healthy' or a WorkflowTaskCompleted event id of the current run", 'last-healthy')
    .option('--reason <text>', 'the reset reason Temporal records (your operator name is appended)')
    .addHelpText('after', examples('campaigns reset <tenant> <campaign> --reason "<why>"', 'campaigns reset <tenant> <campaign> --to <event-id> --reason "<why>"'))
    .action(
      run(
        (t: string, c: string, o: { to: string; reason?: string }) => {
          const [tenant, campaign] = [uuidArg('tenant', t), uuidArg('campaign', c)];
          const to = o.to === 'last-healthy' ? ('last-healthy' as const) : positiveIntArg('--to', o.to);
          return (ctx) => resetCampaignRun(ctx, tenant, campaign, { to, reason: o.reason });
        },
        renderReset,
      ),
    );

  campaigns
    .command('replay')
    .description(
      "Fetch a run's history and replay it locally against the current workflow code (Worker.runReplayHistory): prints ok or the " +
        'determinism error (exit 1). Uses WORKFLOW_BUNDLE_PATH when set, else bundles workflows/index.ts.',
    )
    .argument('<tenant>', 'tenant id')
    .argument('<campaign>', 'campaign id')
    .option('--run <runId>', 'this run instead of the latest')
    .option('--out <file>', 'also save the history as proto JSON (enum names, ids as strings)')
    .addHelpText('after', examples('campaigns replay <tenant> <campaign>', 'campaigns replay <tenant> <campaign> --run <run-id> --out <file>'))
    .action(
      run(
        (t: string, c: string, o: { run?: string; out?: string }) => {
          const [tenant, campaign] = [uuidArg('tenant', t), uuidArg('campaign', c)];
          const runId = o.run === undefined ? undefined : uuidArg('--run', o.run);
          return (ctx) => replayCampaignRun(ctx, tenant, campaign, { runId, out: o.out });
        },
        renderReplay,
      ),
    );

  const webhooks = program.command('webhooks').description('Outbound webhook deliveries');

  webhooks
    .command('dead-letters')
    .description("List a tenant's dead letters (deliveries whose 11-attempt ladder ran out), through the API's delivery listing")
    .requiredOption('--tenant <id>', 'the tenant (dead letters are tenant rows: there is no cross-tenant listing)')
    .option('--endpoint <id>', 'only this webhook endpoint')
    .option('--limit <n>', 'at most this many', '100')
    .addHelpText('after', examples('webhooks dead-letters --tenant <tenant>', 'webhooks dead-letters --tenant <tenant> --endpoint <endpoint> --json'))
    .action(
      run(
        (o: { tenant: string; endpoint?: string; limit: string }) => {
          const args = {
            tenant: uuidArg('--tenant', o.tenant),
            endpoint: o.endpoint === undefined ? undefined : uuidArg('--endpoint', o.endpoint),
            limit: positiveIntArg('--limit', o.limit),
          };
          return (ctx) => listDeadLetters(ctx, args);
        },
        renderDeadLetters,
      ),
    );

  webhooks
    .command('redeliver')
    .description(
      'Send a dead (or cancelled) delivery again, as POST /v1/webhooks/{id}/deliveries/{delivery_id}/redeliver does: pending, due now, ' +
        'same body and delivery id, attempt count kept. Refused while pending or delivered, or when the endpoint is disabled.',
    )
    .argument('<tenant>', 'tenant id')
    .argument('<delivery-id>', 'the delivery id (X-DD-Delivery-Id)')
    .addHelpText('after', examples('webhooks redeliver <tenant> <delivery-id>'))
    .action(run((t: string, d: string) => {
      const [tenant, delivery] = [uuidArg('tenant', t), uuidArg('delivery-id', d)];
      return (ctx) => redeliverDeadLetter(ctx, tenant, delivery);
    }, renderRedeliver));

  const exportsGroup = program.command('exports').description('Recording exports');

  exportsGroup
    .command('stuck')
    .description(
      'List generating (queued or running) recording exports of every tenant whose worker stopped heartbeating ' +
        `(default: older than RECORDING_EXPORT_CLAIM_STALE_SECONDS, now ${env.staleSeconds} s). The tenant's next export request releases them.`,
    )
    .option('--older-than <seconds>', 'silent for longer than this', String(env.staleSeconds))
    .addHelpText('after', examples('exports stuck', 'exports stuck --older-than 60 --json'))
    .action(run((o: { olderThan: string }) => {
      const olderThan = positiveIntArg('--older-than', o.olderThan);
      return (ctx) => listStuckExports(ctx, olderThan);
    }, renderStuckExports));

  const keys = program.command('keys').description('The key that encrypts values at rest (APP_ENCRYPTION_KEY, APP_ENCRYPTION_KEYS_PREVIOUS)');

  keys
    .command('status')
    .description(
      'How many stored values of each encrypted field each key holds (a key id, v1 for values written before key ids, plain for ' +
        'values never sealed). A previous key may be dropped once no field names it. Connects with DATABASE_URL as dialer_owner.',
    )
    .addHelpText('after', examples('keys status', 'keys status --json'))
    .action(run(() => (ctx) => keyStatus(ctx), renderKeyStatus));

  keys
    .command('rotate')
    .description(
      'Re-encrypt every stored value not under the current APP_ENCRYPTION_KEY, in batches (one transaction each) while the API ' +
        'keeps running with the current and previous keys configured. Idempotent and resumable: values already under the current ' +
        'key are skipped. Values no configured key opens are listed and exit 1. Connects with DATABASE_URL as dialer_owner.',
    )
    .option('--batch-size <n>', 'rows per transaction', '500')
    .addHelpText('after', examples('keys rotate', 'keys rotate --batch-size 100 --json'))
    .action(run((o: { batchSize: string }) => {
      const batchSize = positiveIntArg('--batch-size', o.batchSize);
      return (ctx) => rotateKeys(ctx, { batchSize });
    }, renderRotation));

  return program;
}

/** Parses and runs one command line (argv without node and the script); returns the exit code. */
export async function runCli(argv: string[], env: CliEnv): Promise<number> {
  const program = buildProgram(env);
  try {
    await program.parseAsync(argv, { from: 'user' });
    return EXIT_OK;
  } catch (err) {
    if (err instanceof CommanderError) {
      // Commander has already printed the message (or the help) through configureOutput.
      return err.code === 'commander.helpDisplayed' || err.code === 'commander.version' ? EXIT_OK : EXIT_USAGE;
    }
    if (err instanceof UsageError) {
      env.io.err(`error: ${err.message}`);
      return EXIT_USAGE;
    }
    if (err instanceof OpsRefusal) {
      if (err.data !== undefined && program.opts<{ json?: boolean }>().json) env.io.out(toJson(maskPhones(err.data)));
      env.io.err(`refused: ${maskPhones(err.message)}`);
      return EXIT_REFUSED;
    }
    if (err instanceof AppError) {
      env.io.err(`refused: ${err.code}: ${maskPhones(err.message)}`);
      return EXIT_REFUSED;
    }
    env.io.err(`failed: ${maskPhones((err as Error).message ?? String(err))}`.split('\n')[0]!);
    return EXIT_REFUSED;
  }
}

/** Every command's path, for `--help` checks. */
export function commandPaths(env: CliEnv): string[][] {
  const walk = (cmd: Command, prefix: string[]): string[][] =>
    cmd.commands.flatMap((c) => [[...prefix, c.name()], ...walk(c, [...prefix, c.name()])]);
  return walk(buildProgram(env), []);
}
