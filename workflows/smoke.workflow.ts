import { proxyActivities } from '@temporalio/workflow';
import type { SmokeActivities } from '../activities/smoke.activities';

const { recordSmokeCheck } = proxyActivities<SmokeActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { maximumAttempts: 5 },
});

export interface SmokeInput {
  tenantId: string;
}

export interface SmokeResult {
  auditSeq: string;
}

/** Proves the worker path end to end: a workflow whose activity writes to PostgreSQL. */
export async function smokeWorkflow(input: SmokeInput): Promise<SmokeResult> {
  const auditSeq = await recordSmokeCheck(input.tenantId);
  return { auditSeq };
}
