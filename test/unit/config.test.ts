import os from 'node:os';
import path from 'node:path';
import { APP_ROLE, DEFAULT_DATABASE_URL, deriveAppDatabaseUrl, loadConfig, OWNER_ROLE, ROOT_DIR, SERVICE_VERSION } from '../../src/config';

describe('loadConfig', () => {
  it('has the documented defaults for an empty environment', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      NODE_ENV: 'development',
      PORT: 8080,
      METRICS_PORT: 9464,
      WORKER_METRICS_PORT: 9465,
      SHUTDOWN_GRACE_MS: 25_000,
      HOST: '0.0.0.0',
      DB_POOL_MAX: Math.min(32, Math.max(4, 4 * os.cpus().length)),
      TEMPORAL_NAMESPACE: 'default',
      TEMPORAL_TASK_QUEUE: 'dialer',
      MAIL_FROM: 'no-reply@dialer.invalid',
      LOG_LEVEL: 'info',
      PASSWORD_PBKDF2_ITERATIONS: 210_000,
      AI_MAX_CALL_SECONDS_DEFAULT: 900,
      DATA_DIR: path.join(ROOT_DIR, '.data'),
      TOOLS_DIR: path.join(ROOT_DIR, '.tools'),
      ownerDatabaseUrl: DEFAULT_DATABASE_URL,
      appDatabaseUrl: 'postgresql://dialer_app@127.0.0.1:5432/dialer',
      publicBaseUrl: 'http://127.0.0.1:8080',
      egressAllowlist: [],
    });
    expect(config.ADMIN_API_TOKEN).toBeUndefined();
    expect(config.TEMPORAL_ADDRESS).toBeUndefined();
    expect(config.SMTP_URL).toBeUndefined();
    expect(config.APP_ENCRYPTION_KEY).toBeUndefined();
  });

  it('reads the shutdown grace and the worker metrics ports, refusing nonsense', () => {
    expect(loadConfig({ SHUTDOWN_GRACE_MS: '4000', WORKER_METRICS_PORT: '0', TEMPORAL_SDK_METRICS_ADDRESS: ' 0.0.0.0:9466 ' })).toMatchObject({
      SHUTDOWN_GRACE_MS: 4000,
      WORKER_METRICS_PORT: 0,
      TEMPORAL_SDK_METRICS_ADDRESS: '0.0.0.0:9466',
    });
    expect(loadConfig({}).TEMPORAL_SDK_METRICS_ADDRESS).toBeUndefined();
    expect(() => loadConfig({ SHUTDOWN_GRACE_MS: '-1' })).toThrow(/SHUTDOWN_GRACE_MS/);
    expect(() => loadConfig({ SHUTDOWN_GRACE_MS: '2s' })).toThrow(/SHUTDOWN_GRACE_MS/);
    expect(() => loadConfig({ WORKER_METRICS_PORT: '70000' })).toThrow(/WORKER_METRICS_PORT/);
  });

  it('treats blank optional strings as unset and trims the others', () => {
    const config = loadConfig({ ADMIN_API_TOKEN: '   ', TEMPORAL_ADDRESS: '', SMTP_URL: ' smtp://mail:25 ' });
    expect(config.ADMIN_API_TOKEN).toBeUndefined();
    expect(config.TEMPORAL_ADDRESS).toBeUndefined();
    expect(config.SMTP_URL).toBe('smtp://mail:25');
  });

  it('coerces numbers and derives URLs from the environment', () => {
    const config = loadConfig({
      PORT: '3000',
      METRICS_PORT: '0',
      DB_POOL_MAX: '5',
      DATABASE_URL: 'postgresql://admin:s3cret@db.internal:6543/dialer_prod?sslmode=require',
      PUBLIC_BASE_URL: 'https://api.example.com///',
      EGRESS_ALLOWLIST: ' hooks.example.com, ,10.0.0.0/8 ,',
    });
    expect(config.PORT).toBe(3000);
    expect(config.METRICS_PORT).toBe(0);
    expect(config.DB_POOL_MAX).toBe(5);
    expect(config.ownerDatabaseUrl).toBe('postgresql://admin:s3cret@db.internal:6543/dialer_prod?sslmode=require');
    expect(config.appDatabaseUrl).toBe('postgresql://dialer_app@db.internal:6543/dialer_prod?sslmode=require');
    expect(config.publicBaseUrl).toBe('https://api.example.com');
    expect(config.egressAllowlist).toEqual(['hooks.example.com', '10.0.0.0/8']);
  });

  it('uses APP_DATABASE_URL verbatim when set', () => {
    const config = loadConfig({
      DATABASE_URL: 'postgresql://admin@db/dialer',
      APP_DATABASE_URL: 'postgresql://app_user:pw@pooler:6432/dialer',
    });
    expect(config.appDatabaseUrl).toBe('postgresql://app_user:pw@pooler:6432/dialer');
  });

  it.each([
    ['PORT', '70000'],
    ['PORT', 'eighty'],
    ['PORT', '-1'],
    ['DB_POOL_MAX', '0'],
    ['DB_POOL_MAX', '201'],
    ['PASSWORD_PBKDF2_ITERATIONS', '999'],
    ['AI_MAX_CALL_SECONDS_DEFAULT', '0'],
  ])('refuses %s=%s naming the variable', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(new RegExp(`invalid environment: .*${name}`));
  });
});

describe('deriveAppDatabaseUrl', () => {
  it('swaps the credentials for the dialer_app role and keeps the rest', () => {
    expect(APP_ROLE).toBe('dialer_app');
    expect(OWNER_ROLE).toBe('dialer_owner');
    expect(deriveAppDatabaseUrl('postgresql://postgres@127.0.0.1:5432/dialer_test')).toBe(
      'postgresql://dialer_app@127.0.0.1:5432/dialer_test',
    );
    expect(deriveAppDatabaseUrl('postgres://owner:p%40ss@db.example.com/app?sslmode=verify-full&application_name=x')).toBe(
      'postgres://dialer_app@db.example.com/app?sslmode=verify-full&application_name=x',
    );
  });

  it('never carries the owner password over', () => {
    expect(deriveAppDatabaseUrl('postgresql://owner:topsecret@h/d')).not.toContain('topsecret');
  });

  it('throws on something that is not a URL', () => {
    expect(() => deriveAppDatabaseUrl('not a url')).toThrow();
  });
});

describe('versioning', () => {
  it('the service version is the interface version 0.36.0', () => {
    expect(SERVICE_VERSION).toBe('0.36.0');
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    expect((require('../../package.json') as { version: string }).version).toBe(SERVICE_VERSION);
  });
});

describe('blank environment values', () => {
  it('fall back to the defaults instead of becoming 0', () => {
    const config = loadConfig({ PORT: '', METRICS_PORT: '  ', DB_POOL_MAX: '', PASSWORD_PBKDF2_ITERATIONS: '', AI_MAX_CALL_SECONDS_DEFAULT: '' });
    expect(config.PORT).toBe(8080);
    expect(config.METRICS_PORT).toBe(9464);
    expect(config.DB_POOL_MAX).toBe(Math.min(32, Math.max(4, 4 * os.cpus().length)));
    expect(config.PASSWORD_PBKDF2_ITERATIONS).toBe(210_000);
    expect(config.AI_MAX_CALL_SECONDS_DEFAULT).toBe(900);
  });

  it('still refuses a value that is set and wrong', () => {
    expect(() => loadConfig({ PORT: 'eighty' })).toThrow(/PORT/);
  });
});

describe('encryption keys', () => {
  it('refuses to start in production without APP_ENCRYPTION_KEY, naming it', () => {
    expect(() => loadConfig({ NODE_ENV: 'production' })).toThrow(/APP_ENCRYPTION_KEY must be set when NODE_ENV=production/);
    expect(() => loadConfig({ NODE_ENV: 'production', APP_ENCRYPTION_KEY: '   ' })).toThrow(/APP_ENCRYPTION_KEY/);
    expect(loadConfig({ NODE_ENV: 'production', APP_ENCRYPTION_KEY: 'k-prod' }).APP_ENCRYPTION_KEY).toBe('k-prod');
    // Outside production the local key still stands in (runtime warns once).
    expect(loadConfig({ NODE_ENV: 'development' }).APP_ENCRYPTION_KEY).toBeUndefined();
  });

  it('reads the previous keys as a comma-separated list of secrets that still decrypt', () => {
    expect(loadConfig({}).encryptionKeysPrevious).toEqual([]);
    expect(loadConfig({ APP_ENCRYPTION_KEY: 'new', APP_ENCRYPTION_KEYS_PREVIOUS: ' old-1 , old-2,old-1 ' }).encryptionKeysPrevious).toEqual(['old-1', 'old-2']);
    expect(() => loadConfig({ APP_ENCRYPTION_KEYS_PREVIOUS: 'old' })).toThrow(/APP_ENCRYPTION_KEYS_PREVIOUS needs APP_ENCRYPTION_KEY/);
    expect(() => loadConfig({ APP_ENCRYPTION_KEY: 'new', APP_ENCRYPTION_KEYS_PREVIOUS: 'old,,older' })).toThrow(/empty entry/);
    expect(() => loadConfig({ APP_ENCRYPTION_KEY: 'new', APP_ENCRYPTION_KEYS_PREVIOUS: 'old,new' })).toThrow(/lists the current/);
  });
});

describe('SIP_EDGE_ALLOWLIST', () => {
  it('normalizes addresses, CIDR blocks and host names', () => {
    expect(loadConfig({}).sipEdgeAllowlist).toEqual([]);
    expect(loadConfig({ SIP_EDGE_ALLOWLIST: ' 10.1.2.3 , 192.168.0.0/16, FD00::/8, SBC.Corp.Example. ,::1' }).sipEdgeAllowlist).toEqual([
      '10.1.2.3/32',
      '192.168.0.0/16',
      'fd00::/8',
      'sbc.corp.example',
      '::1/128',
    ]);
  });

  it.each(['10.0.0.0/33', '10', '10.0/8', 'not a host', 'sbc.example/24', 'http://sbc.example'])('refuses %s', (entry) => {
    expect(() => loadConfig({ SIP_EDGE_ALLOWLIST: entry })).toThrow(/SIP_EDGE_ALLOWLIST/);
  });
});
