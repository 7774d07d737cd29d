/**
 * Every line the application logs, for tests that show what never reaches a log. A test file
 * routes pino through it (jest.mock is per file and hoisted, so each file says it):
 *
 *   jest.mock('pino', () => jest.requireActual<typeof import('../helpers/log-collector')>('../helpers/log-collector').collectingPino());
 *
 * and reads `logLines` afterwards. requireActual returns the same module instance the file imports.
 */
export const logLines: string[] = [];

/** pino as it is, with every logger writing its lines into `logLines`. */
export function collectingPino(): unknown {
  const actual = jest.requireActual<(opts: unknown, stream: unknown) => unknown>('pino');
  const collect = { write: (line: string) => void logLines.push(line) };
  const wrapped = (opts: unknown) => actual(opts, collect);
  Object.assign(wrapped, actual);
  (wrapped as unknown as { default: unknown }).default = wrapped;
  return wrapped;
}
