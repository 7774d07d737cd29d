import type { AppDeps } from '../src/deps';
import { createCallbackActivities } from './callback.activities';
import { createCallControlActivities } from './call-control.activities';
import { createDialerActivities } from './dialer.activities';
import { createPromiseActivities } from './promise.activities';
import { createSmokeActivities } from './smoke.activities';
import { createWebhookActivities } from './webhook.activities';

/** All activities, built from injected dependencies; the worker registers the result. */
export function createActivities(deps: AppDeps) {
  return {
    ...createSmokeActivities(deps),
    ...createCallbackActivities(deps),
    ...createPromiseActivities(deps),
    ...createDialerActivities(deps),
    ...createWebhookActivities(deps),
    ...createCallControlActivities(deps),
  };
}
