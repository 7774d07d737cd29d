import path from 'node:path';
import { DefaultLogger, NativeConnection, Runtime, Worker, type WorkerOptions } from '@temporalio/worker';
import { createActivities } from '../activities';
import type { Client } from '@temporalio/client';
import { startCallEventRelay } from '../src/modules/dialer/call-event.relay';
import { startRegistrationRelay } from '../src/modules/switch-directory/registration.relay';
import { startSupervisionLegRelay } from '../src/modules/supervision/supervision-leg.relay';
import { runAudioGateway } from '../src/modules/ai-calls/audio-gateway';
import type { EslManager } from '../src/switch/esl';
import type { AppDeps } from '../src/deps';
import type { ShutdownStep } from '../src/runtime';
import { workerMetrics } from '../src/lib/metrics';
import { activityMetricsInterceptor } from '../src/lib/worker-metrics';
import { recordingRetentionSweepSignal, recordingRetentionWorkflow, recordingRetentionWorkflowId } from '../workflows/recording-retention.workflow';
import { billingEnforcementPassSignal, billingEnforcementWorkflow, billingEnforcementWorkflowId } from '../workflows/billing-enforcement.workflow';
import { webhookDispatcherWorkflow, webhookDispatcherWorkflowId, webhookWakeSignal } from '../workflows/webhook-dispatcher.workflow';
import { rateLimitPruneNowSignal, rateLimitPruneWorkflow } from '../workflows/rate-limit-prune.workflow';
import { rateLimitPruneWorkflowId } from '../src/contracts/rate-limit-prune';

export const WORKFLOWS_PATH = path.resolve(__dirname, '../workflows/index.ts');

export interface WorkerSetup {
  address: string;
  namespace: string;
  taskQueue: string;
  /** A prebuilt bundle (tests build one once); otherwise workflows are bundled at start. */
  workflowBundlePath?: string;
  /** How long shutdown() lets in-flight activities finish before cancelling them (SHUTDOWN_GRACE_MS). */
  shutdownGraceMs?: number;
  /**
   * host:port where the SDK's own Prometheus exporter serves its temporal_* metrics (task slots,
   * poll and schedule-to-start latencies). Takes effect for the first worker of the process only.
   */
  sdkMetricsAddress?: string;
}

let runtimeInstalled = false;

/**
 * SDK logs at WARN and above: the bundler's per-module chatter is noise in the service log. No
 * shutdown signals: the process's own handler shuts the worker down in order with the rest
 * (src/runtime.ts onShutdownSignals), and a second signal must force the exit, not re-request it.
 */
function installRuntime(sdkMetricsAddress: string | undefined): void {
  if (runtimeInstalled) return;
  runtimeInstalled = true;
  try {
    Runtime.install({
      logger: new DefaultLogger('WARN'),
      shutdownSignals: [],
      ...(sdkMetricsAddress ? { telemetryOptions: { metrics: { prometheus: { bindAddress: sdkMetricsAddress } } } } : {}),
    });
  } catch {
    // Already installed by the host (tests create several workers in one process).
  }
}

export interface WorkerHandle {
  worker: Worker;
  connection: NativeConnection;
  /** Stops relaying switch events (call sessions, supervisor legs; a no-op where the process has no switch link). */
  stopRelay: () => Promise<void>;
  /**
   * Stops taking tasks and ends idle waits at once; shutdownGraceTime lets the activities in
   * flight finish, then cancels them. Safe to call more than once.
   */
  shutdown: () => void;
}

/** The switch's events this worker turns into workflow starts and signals: call events and supervisor leg hangups. */
function startSwitchRelays(deps: AppDeps, esl: EslManager, temporal: Client, taskQueue: string): () => Promise<void> {
  const stops = [
    startCallEventRelay({ esl, temporal, taskQueue, logger: deps.logger.child({ component: 'call-events' }), box: deps.box, db: deps.db }),
    startSupervisionLegRelay({ esl, temporal, taskQueue, logger: deps.logger.child({ component: 'supervision-legs' }) }),
    startRegistrationRelay({ esl, db: deps.db, logger: deps.logger.child({ component: 'registrations' }), temporal }),
    // The AI's audio gateway, where AI_AUDIO_WS_PORT is set (docs/ai-calls.md).
    runAudioGateway(deps, esl, temporal),
  ];
  return async () => {
    await Promise.all(stops.map((stop) => stop()));
  };
}

/**
 * One worker process hosts every workflow and activity of the service on one task queue, and,
 * where it has the switch link, relays the switch's call events to the call-session workflows.
 */
export async function createWorker(deps: AppDeps, setup: WorkerSetup): Promise<WorkerHandle> {
  installRuntime(setup.sdkMetricsAddress);
  const stopping = new AbortController();
  const connection = await NativeConnection.connect({ address: setup.address });
  const options: WorkerOptions = {
    connection,
    namespace: setup.namespace,
    taskQueue: setup.taskQueue,
    activities: createActivities(deps, { stopping: stopping.signal }),
    interceptors: { activity: [activityMetricsInterceptor] },
    ...(setup.shutdownGraceMs !== undefined ? { shutdownGraceTime: setup.shutdownGraceMs } : {}),
    ...(setup.workflowBundlePath ? { workflowBundle: { codePath: setup.workflowBundlePath } } : { workflowsPath: WORKFLOWS_PATH }),
  };
  const worker = await Worker.create(options);
  workerMetrics.track(setup.taskQueue, () => worker.getState());
  if (deps.temporal) {
    // Per-queue loops: starting them here means a deployment never lacks one, and a start while one
    // runs only signals it (a worker restart cuts its current wait short). A failed start is logged
    // and retried by the next worker start.
    const client = deps.temporal;
    const start = async (name: string, consequence: string, run: () => Promise<unknown>) => {
      try {
        await run();
      } catch (err) {
        deps.logger.error({ err }, `could not start the ${name} workflow; ${consequence}`);
      }
    };
    const queue = setup.taskQueue;
    await start('webhook dispatcher', 'outbound webhooks wait until a worker starts it', () =>
      client.workflow.signalWithStart(webhookDispatcherWorkflow, { workflowId: webhookDispatcherWorkflowId(queue), taskQueue: queue, signal: webhookWakeSignal, args: [{}] }),
    );
    await start('recording retention', 'expired audio waits until a worker starts it', () =>
      client.workflow.signalWithStart(recordingRetentionWorkflow, {
        workflowId: recordingRetentionWorkflowId(queue),
        taskQueue: queue,
        signal: recordingRetentionSweepSignal,
        args: [{}],
      }),
    );
    await start('billing enforcement', 'billing is enforced only on operator plan writes until a worker starts it', () =>
      client.workflow.signalWithStart(billingEnforcementWorkflow, {
        workflowId: billingEnforcementWorkflowId(queue),
        taskQueue: queue,
        signal: billingEnforcementPassSignal,
        args: [{ intervalMs: deps.config.BILLING_ENFORCEMENT_INTERVAL_MS }],
      }),
    );
    await start('rate-limit prune', 'expired rate_limits windows pile up until a worker starts it', () =>
      client.workflow.signalWithStart(rateLimitPruneWorkflow, {
        workflowId: rateLimitPruneWorkflowId(queue),
        taskQueue: queue,
        signal: rateLimitPruneNowSignal,
        args: [{ intervalMs: deps.config.RATE_LIMIT_PRUNE_INTERVAL_MS }],
      }),
    );
  }
  const stopRelay = deps.esl && deps.temporal ? startSwitchRelays(deps, deps.esl, deps.temporal, setup.taskQueue) : () => Promise.resolve();
  const shutdown = () => {
    stopping.abort();
    if (worker.getState() === 'RUNNING') worker.shutdown();
  };
  return { worker, connection, stopRelay, shutdown };
}

/**
 * The service's worker (npm start, npm run worker) from the deployment's configuration, running.
 * `step` is its shutdown step: told to stop at the signal, drained within SHUTDOWN_GRACE_MS, then
 * its relay and connection closed.
 */
export async function runServiceWorker(deps: AppDeps, address: string): Promise<{ running: Promise<void>; step: ShutdownStep }> {
  const { config } = deps;
  const handle = await createWorker(deps, {
    address,
    namespace: config.TEMPORAL_NAMESPACE,
    taskQueue: config.TEMPORAL_TASK_QUEUE,
    workflowBundlePath: config.WORKFLOW_BUNDLE_PATH,
    shutdownGraceMs: config.SHUTDOWN_GRACE_MS,
    sdkMetricsAddress: config.TEMPORAL_SDK_METRICS_ADDRESS,
  });
  const running = handle.worker.run();
  return {
    running,
    step: {
      name: 'temporal worker (in-flight activities finish or are cancelled)',
      begin: handle.shutdown,
      run: async () => {
        await running;
        await handle.stopRelay();
        await handle.connection.close();
      },
    },
  };
}
