import { ApplicationFailure } from '@temporalio/common';
import type { CallbackActivities, DialCallbackInput, DialCallbackResult, MissCallbackInput } from '../src/contracts/callback';
import type { AppDeps } from '../src/deps';
import { dialCallback } from '../src/modules/callbacks/callback-dial.service';
import { missCallbackIfPending } from '../src/modules/callbacks/callback.service';

export type { MissCallbackInput } from '../src/contracts/callback';

const notFound = (callbackId: string) => ApplicationFailure.nonRetryable(`callback ${callbackId} not found for the tenant`, 'CallbackNotFound');

export function createCallbackActivities(deps: AppDeps): CallbackActivities {
  return {
    async missCallbackIfPending(input: MissCallbackInput): Promise<{ status: string }> {
      const callback = await missCallbackIfPending(deps, input.tenantId, { type: 'workflow', id: null }, input.callbackId);
      if (!callback) throw notFound(input.callbackId);
      return { status: callback.status };
    },
    async dialCallback(input: DialCallbackInput): Promise<DialCallbackResult> {
      const result = await dialCallback(deps, input);
      if (result === null) throw notFound(input.callbackId);
      return result;
    },
  };
}
