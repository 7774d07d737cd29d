import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../src/config';
import type { Logger } from '../../src/lib/logger';
import { resolveEncryptionKey } from '../../src/runtime';

describe('resolveEncryptionKey', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'enc-key-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('outside production without APP_ENCRYPTION_KEY: a key kept in DATA_DIR, and one warning per process', () => {
    const warn = jest.fn();
    const logger = { warn } as unknown as Logger;
    const config = loadConfig({ NODE_ENV: 'development', DATA_DIR: dir });
    const first = resolveEncryptionKey(config, logger);
    const second = resolveEncryptionKey(config, logger);
    expect(first).toBe(readFileSync(path.join(dir, 'app-encryption.key'), 'utf8').trim());
    expect(second).toBe(first);
    expect(warn).toHaveBeenCalledTimes(1);
    expect(warn.mock.calls[0]![1]).toMatch(/APP_ENCRYPTION_KEY is not set/);
    // The warning never carries the key.
    expect(JSON.stringify(warn.mock.calls)).not.toContain(first);
  });

  it('uses APP_ENCRYPTION_KEY as it is when set, without a warning', () => {
    const warn = jest.fn();
    expect(resolveEncryptionKey(loadConfig({ APP_ENCRYPTION_KEY: 'k-set', DATA_DIR: dir }), { warn } as unknown as Logger)).toBe('k-set');
    expect(warn).not.toHaveBeenCalled();
  });
});
