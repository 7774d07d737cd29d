import type { AppDeps } from '../src/deps';
import { createCallbackActivities } from './callback.activities';
import { createCallControlActivities } from './call-control.activities';
import { createDialerActivities } from './dialer.activities';
import { createPromiseActivities } from './promise.activities';
import { createSmokeActivities } from './smoke.activities';
import { createWebhookActivities, type WebhookActivityOptions } from './webhook.activities';
import { createSipActivities } from './sip.activities';
import { createSupervisionActivities } from './supervision.activities';
import { createAgentActivities } from './agent.activities';
import { createRecordingActivities } from './recording.activities';
import { createRecordingExportActivities } from './recording-export.activities';
import { createAiAgentActivities } from './ai-agent.activities';
import { createAiCallActivities } from './ai-call.activities';
import { createBillingActivities } from './billing.activities';
import { createAuthActivities } from './auth.activities';
import { createInboundActivities } from './inbound.activities';

/** All activities, built from injected dependencies; the worker registers the result. */
export function createActivities(deps: AppDeps, options: WebhookActivityOptions = {}) {
  return {
    ...createSmokeActivities(deps),
    ...createCallbackActivities(deps),
    ...createPromiseActivities(deps),
    ...createDialerActivities(deps),
    ...createWebhookActivities(deps, options),
    ...createCallControlActivities(deps),
    ...createSipActivities(deps),
    ...createSupervisionActivities(deps),
    ...createAgentActivities(deps),
    ...createRecordingActivities(deps),
    ...createRecordingExportActivities(deps),
    ...createAiAgentActivities(deps),
    ...createAiCallActivities(deps),
    ...createBillingActivities(deps),
    ...createAuthActivities(deps),
    ...createInboundActivities(deps),
  };
}
