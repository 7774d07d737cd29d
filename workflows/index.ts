// Every workflow type the worker registers. Workflow code is deterministic: it imports only
// @temporalio/workflow and types (lint and the before-stop hook enforce it).
export { smokeWorkflow } from './smoke.workflow';
export { callbackTimerWorkflow } from './callback.workflow';
export { promiseDeadlineWorkflow } from './promise.workflow';
export { campaignRunWorkflow } from './campaign-run.workflow';
export { callSessionWorkflow } from './call-session.workflow';
export { placeCallWorkflow } from './place-call.workflow';
export { callControlWorkflow } from './call-control.workflow';
export { webhookDispatcherWorkflow } from './webhook-dispatcher.workflow';
export { sipTeardownWorkflow } from './sip-teardown.workflow';
export { supervisionWorkflow } from './supervision.workflow';
export { supervisionLegEndedWorkflow } from './supervision-leg.workflow';
export { agentWrapUpWorkflow } from './agent-wrap-up.workflow';
export { recordingRetentionWorkflow } from './recording-retention.workflow';
export { recordingExportWorkflow } from './recording-export.workflow';
export { aiAgentLifecycleWorkflow } from './ai-agent.workflow';
export { aiCallWorkflow } from './ai-call.workflow';
export { billingEnforcementWorkflow } from './billing-enforcement.workflow';
export { passwordResetWorkflow } from './password-reset.workflow';
export { mailDeliveryWorkflow } from './mail-delivery.workflow';
export { rateLimitPruneWorkflow } from './rate-limit-prune.workflow';
export { inboundCallWorkflow } from './inbound-call.workflow';
