import { randomInt } from 'node:crypto';

/**
 * A random loopback address to send from (127.x.y.z answers on Linux without setup). Password
 * attempts are budgeted per client address across the whole test database, so a test that makes
 * failed attempts makes them from its own address and never spends another file's budget.
 */
export function randomLoopback(): string {
  return `127.${randomInt(100, 250)}.${randomInt(0, 256)}.${randomInt(1, 255)}`;
}
