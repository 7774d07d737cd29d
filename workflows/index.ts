// Every workflow type the worker registers. Workflow code is deterministic: it imports only
// @temporalio/workflow and types (lint and the before-stop hook enforce it).
export { smokeWorkflow } from './smoke.workflow';
