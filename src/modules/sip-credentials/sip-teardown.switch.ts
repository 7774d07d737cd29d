import { ApplicationFailure } from '@temporalio/common';
import type { AppDeps } from '../../deps';
import { createSwitchCommands, EslCommandError, EslUnavailableError } from '../../switch/esl';

/**
 * Typed failures of the SIP teardown activity (ApplicationFailure.type). All are non-retryable:
 * the API answers `sip_teardown: failed` at once and the credential's autoexpiry is the backstop.
 */
export const SIP_TEARDOWN_FAILURES = {
  /** The switch control link is down (or went down mid-command). */
  eslUnavailable: 'SipTeardownEslUnavailable',
  /** The switch refused the flush (details: [switch cause]). */
  switchRejected: 'SipTeardownSwitchRejected',
} as const;

export interface SipTeardownInput {
  tenantId: string;
  agentId: string;
  extension: string;
  /** The SIP domain the softphone registers with (SIP_DOMAIN); null flushes the user on every host. */
  domain: string | null;
}

export interface SipTeardownOutcome {
  at: string;
}

const nonRetryable = (message: string, type: string, details: unknown[] = []) => ApplicationFailure.create({ message, type, nonRetryable: true, details });

/** Drops the extension's registrations on the switch (run by the SIP teardown activity). */
export async function runSipTeardown(deps: AppDeps, input: SipTeardownInput): Promise<SipTeardownOutcome> {
  const esl = deps.esl;
  if (!esl?.isUp()) throw nonRetryable('the switch control link is unavailable', SIP_TEARDOWN_FAILURES.eslUnavailable);
  try {
    await createSwitchCommands(esl).flushRegistration(input.extension, input.domain ?? undefined);
  } catch (err) {
    if (err instanceof EslUnavailableError) throw nonRetryable('the switch control link is unavailable', SIP_TEARDOWN_FAILURES.eslUnavailable);
    if (err instanceof EslCommandError) {
      throw nonRetryable(`the switch refused the registration flush (${err.switchCause})`, SIP_TEARDOWN_FAILURES.switchRejected, [err.switchCause]);
    }
    throw err;
  }
  return { at: new Date().toISOString() };
}
