import { AppError } from '../../src/lib/errors';

/** The AppError `fn` throws; fails the test when it throws nothing or something else. */
export function errorOf(fn: () => unknown): AppError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(AppError);
    return err as AppError;
  }
  throw new Error('expected an AppError');
}
