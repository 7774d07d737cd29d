import { ApplicationFailure } from '@temporalio/common';
import type { AppDeps } from '../src/deps';
import { AppError } from '../src/lib/errors';
import { promiseStatus, resolvePromiseStatus } from '../src/modules/promises/promise.service';

export interface BreakPromiseInput {
  tenantId: string;
  promiseId: string;
}

const notFound = (promiseId: string) => ApplicationFailure.nonRetryable(`promise ${promiseId} not found for the tenant`, 'PromiseNotFound');

export function createPromiseActivities(deps: Pick<AppDeps, 'db'>) {
  return {
    /**
     * pending to broken through the PATCH route's logic (audit entry, debt released when it was its
     * last pending promise); a promise already kept, cancelled or broken keeps its status.
     */
    async breakPromiseIfPending(input: BreakPromiseInput): Promise<{ status: string }> {
      try {
        const promise = await resolvePromiseStatus(deps, input.tenantId, { type: 'workflow', id: null }, input.promiseId, 'broken');
        return { status: promise.status };
      } catch (err) {
        if (!(err instanceof AppError)) throw err;
        if (err.code === 'not_found') throw notFound(input.promiseId);
        if (err.code !== 'conflict') throw err;
      }
      const status = await promiseStatus(deps, input.tenantId, input.promiseId);
      if (status === null) throw notFound(input.promiseId);
      return { status };
    },
  };
}

export type PromiseActivities = ReturnType<typeof createPromiseActivities>;
