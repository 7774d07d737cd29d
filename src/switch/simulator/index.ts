export { createFakeClock, realClock, type Clock, type ClockTimer, type FakeClock } from './clock';
export { outcomeFor, HANGUP_CAUSES, type Outcome, type OutcomeKind, type AmdVerdict } from './plan';
export { startSwitchSimulator, type SoftphoneRegistration, type SwitchSimulator, type SwitchSimulatorOptions } from './server';
export { digestResponse, passwordFromDirectory, type DirectoryClient } from './registrar';
export type { ChannelSnapshot, EavesdropMode, LegKind, SpokenText } from './switch';
export type { SwitchEvent } from './protocol';
export { readWavHeader, wavBuffer, type WavInfo } from './wav';
export { createSimulatedSoftphones, type SimulatedSoftphonesOptions } from './softphones';
