import path from 'node:path';
import { DefaultLogger, NativeConnection, Runtime, Worker, type WorkerOptions } from '@temporalio/worker';
import { createActivities } from '../activities';
import { startCallEventRelay } from '../src/modules/dialer/call-event.relay';
import type { AppDeps } from '../src/deps';
import { webhookDispatcherWorkflow, webhookDispatcherWorkflowId, webhookWakeSignal } from '../workflows/webhook-dispatcher.workflow';

export const WORKFLOWS_PATH = path.resolve(__dirname, '../workflows/index.ts');

export interface WorkerSetup {
  address: string;
  namespace: string;
  taskQueue: string;
  /** A prebuilt bundle (tests build one once); otherwise workflows are bundled at start. */
  workflowBundlePath?: string;
}

let runtimeInstalled = false;

/** SDK logs at WARN and above: the bundler's per-module chatter is noise in the service log. */
function installRuntime(): void {
  if (runtimeInstalled) return;
  runtimeInstalled = true;
  try {
    Runtime.install({ logger: new DefaultLogger('WARN') });
  } catch {
    // Already installed by the host (tests create several workers in one process).
  }
}

export interface WorkerHandle {
  worker: Worker;
  connection: NativeConnection;
  /** Stops relaying switch events to call sessions (a no-op where the process has no switch link). */
  stopRelay: () => Promise<void>;
}

/**
 * One worker process hosts every workflow and activity of the service on one task queue, and,
 * where it has the switch link, relays the switch's call events to the call-session workflows.
 */
export async function createWorker(deps: AppDeps, setup: WorkerSetup): Promise<WorkerHandle> {
  installRuntime();
  const connection = await NativeConnection.connect({ address: setup.address });
  const options: WorkerOptions = {
    connection,
    namespace: setup.namespace,
    taskQueue: setup.taskQueue,
    activities: createActivities(deps),
    ...(setup.workflowBundlePath ? { workflowBundle: { codePath: setup.workflowBundlePath } } : { workflowsPath: WORKFLOWS_PATH }),
  };
  const worker = await Worker.create(options);
  if (deps.temporal) {
    // The outbox's dispatcher runs on this queue; starting it here means a deployment never lacks
    // one, and a start while it runs only wakes it (a worker restart cuts its current wait short).
    try {
      await deps.temporal.workflow.signalWithStart(webhookDispatcherWorkflow, {
        workflowId: webhookDispatcherWorkflowId(setup.taskQueue),
        taskQueue: setup.taskQueue,
        signal: webhookWakeSignal,
        args: [{}],
      });
    } catch (err) {
      deps.logger.error({ err }, 'could not start the webhook dispatcher workflow; outbound webhooks wait until a worker starts it');
    }
  }
  const stopRelay =
    deps.esl && deps.temporal
      ? startCallEventRelay({ esl: deps.esl, temporal: deps.temporal, taskQueue: setup.taskQueue, logger: deps.logger.child({ component: 'call-events' }) })
      : () => Promise.resolve();
  return { worker, connection, stopRelay };
}
