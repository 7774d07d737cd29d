import { AppError, type ErrorCode } from '../../lib/errors';

/**
 * The switch control link is not usable: not connected, connection lost while the command was in
 * flight, closed, or no reply in time. Retryable; the API answers 503 `esl_unavailable`.
 * A command that failed this way may or may not have reached the switch.
 */
export class EslUnavailableError extends Error {
  override name = 'EslUnavailableError';
  constructor(
    message: string,
    readonly command?: string,
  ) {
    super(message);
  }
}

/** No reply within the command's timeout (the link may be hung). Also an EslUnavailableError. */
export class EslTimeoutError extends EslUnavailableError {
  override name = 'EslTimeoutError';
  constructor(
    command: string,
    readonly timeoutMs: number,
  ) {
    super(`no reply from the switch within ${timeoutMs} ms`, command);
  }
}

/**
 * The switch answered `-ERR ...` (or `-USAGE: ...`). `switchCause` is the first word after `-ERR`
 * (the hangup cause of a failed originate, for example USER_BUSY or USER_NOT_REGISTERED).
 * Callers map it to 502 (`dial_error`, `supervision_failed`).
 */
export class EslCommandError extends Error {
  override name = 'EslCommandError';
  readonly switchCause: string;
  constructor(
    readonly command: string,
    readonly reply: string,
  ) {
    super(`switch refused ${command.split(' ')[0] ?? command}: ${reply}`);
    const m = /^-(?:ERR|USAGE:?)\s*(\S+)?/.exec(reply);
    this.switchCause = m?.[1] ?? 'UNKNOWN';
  }
}

/** True for a reply FreeSWITCH uses to refuse a command. */
export function isErrorReply(text: string): boolean {
  const t = text.trimStart();
  return t.startsWith('-ERR') || t.startsWith('-USAGE');
}

/**
 * Maps a switch failure onto the API's error envelope: EslUnavailableError is 503 `esl_unavailable`,
 * EslCommandError is 502 with the caller's code (dial_error for dialing and call control,
 * supervision_failed for supervision). Anything else is returned unchanged.
 */
export function eslErrorToAppError(err: unknown, commandErrorCode: Extract<ErrorCode, 'dial_error' | 'supervision_failed' | 'sbc_error'> = 'dial_error'): unknown {
  if (err instanceof EslUnavailableError) {
    return new AppError(503, 'esl_unavailable', 'switch control link unavailable; retry with backoff');
  }
  if (err instanceof EslCommandError) {
    return new AppError(502, commandErrorCode, `the switch rejected the command (${err.switchCause})`);
  }
  return err;
}
