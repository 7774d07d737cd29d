import type { AppDeps } from '../src/deps';
import { createSmokeActivities } from './smoke.activities';

/** All activities, built from injected dependencies; the worker registers the result. */
export function createActivities(deps: AppDeps) {
  return {
    ...createSmokeActivities(deps),
  };
}
