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
