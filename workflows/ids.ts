// Workflow ids are business keys: a second start for the same thing reaches the same workflow,
// and an operator finds it in the Temporal Web UI by what it is about.

export const campaignRunWorkflowId = (tenantId: string, campaignId: string) => `campaign-run:${tenantId}:${campaignId}`;
export const callbackWorkflowId = (tenantId: string, callbackId: string) => `callback:${tenantId}:${callbackId}`;
export const promiseWorkflowId = (tenantId: string, promiseId: string) => `promise:${tenantId}:${promiseId}`;
export const placeCallWorkflowId = (tenantId: string, callAttemptId: string) => `dial:${tenantId}:${callAttemptId}`;
export const aiCallWorkflowId = (tenantId: string, callUuid: string) => `ai-call:${tenantId}:${callUuid}`;
export const supervisionLegWorkflowId = (tenantId: string, sessionId: string) => `supervision-leg:${tenantId}:${sessionId}`;
