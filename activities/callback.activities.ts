import { ApplicationFailure } from '@temporalio/common';
import type { AppDeps } from '../src/deps';
import { missCallbackIfPending } from '../src/modules/callbacks/callback.service';

export interface MissCallbackInput {
  tenantId: string;
  callbackId: string;
}

export function createCallbackActivities(deps: Pick<AppDeps, 'db'>) {
  return {
    /** pending to missed (audited, actor workflow); any other status is the final one and stays. */
    async missCallbackIfPending(input: MissCallbackInput): Promise<{ status: string }> {
      const callback = await missCallbackIfPending(deps, input.tenantId, { type: 'workflow', id: null }, input.callbackId);
      if (!callback) throw ApplicationFailure.nonRetryable(`callback ${input.callbackId} not found for the tenant`, 'CallbackNotFound');
      return { status: callback.status };
    },
  };
}

export type CallbackActivities = ReturnType<typeof createCallbackActivities>;
