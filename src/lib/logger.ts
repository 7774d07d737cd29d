import pino, { type Logger } from 'pino';

export type { Logger };

/**
 * Structured JSON logs. Credentials, passwords and notes are redacted wherever they appear in a
 * logged object; callers never log full phone numbers (mask with maskPhone from ./phone).
 */
export function createLogger(level: string, base: Record<string, unknown> = {}): Logger {
  return pino({
    level,
    base: { service: 'dialer-control-plane', ...base },
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: {
      paths: [
        'password',
        '*.password',
        'token',
        '*.token',
        'secret',
        '*.secret',
        'note',
        '*.note',
        'authorization',
        '*.authorization',
        'headers.authorization',
      ],
      censor: '[redacted]',
    },
  });
}
