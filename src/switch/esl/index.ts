export { createEslManager, backoffDelay, ESL_EVENTS, type EslManager, type EslManagerOptions, type EslHealth, type EslLinkState, type EslLogger } from './manager';
export { EslCommandError, EslTimeoutError, EslUnavailableError, eslErrorToAppError, isErrorReply } from './errors';
export type { EslEvent } from './events';
export { LivenessProbe, type LivenessClock, type LivenessProbeOptions } from './liveness';
export {
  buildFlushRegistration,
  buildOriginate,
  buildSpeak,
  createSwitchCommands,
  dialString,
  speakableText,
  eavesdropVariables,
  type ChannelVariables,
  type EavesdropMode,
  type EavesdropParams,
  type Endpoint,
  type LegApp,
  type OriginateParams,
  type SpeakParams,
  type SwitchCommands,
  type SwitchCommandsOptions,
} from './commands';
