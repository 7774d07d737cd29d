export { createEslManager, backoffDelay, ESL_EVENTS, type EslManager, type EslManagerOptions, type EslHealth, type EslLinkState, type EslLogger } from './manager';
export { EslCommandError, EslTimeoutError, EslUnavailableError, eslErrorToAppError, isErrorReply } from './errors';
export type { EslEvent } from './events';
export {
  buildFlushRegistration,
  buildOriginate,
  createSwitchCommands,
  dialString,
  eavesdropVariables,
  type ChannelVariables,
  type EavesdropMode,
  type EavesdropParams,
  type Endpoint,
  type LegApp,
  type OriginateParams,
  type SwitchCommands,
  type SwitchCommandsOptions,
} from './commands';
