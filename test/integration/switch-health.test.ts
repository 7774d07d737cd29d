import { Hono } from 'hono';
import { errorHandler } from '../../src/lib/http-middleware';
import { freePort } from '../../src/platform/temporal-dev';
import { createEslManager, EslCommandError, EslUnavailableError, type EslManager } from '../../src/switch/esl';
import { startSwitchSimulator, type SwitchSimulator } from '../../src/switch/simulator';
import { startTestApp, type TestApp } from '../helpers/harness';

const quiet = { debug() {}, info() {}, warn() {}, error() {} };

function waitFor(esl: EslManager, state: 'up' | 'down'): Promise<void> {
  if (esl.isUp() === (state === 'up')) return Promise.resolve();
  return new Promise((resolve) => esl.once(state, () => resolve()));
}

describe('/healthz reports the switch link', () => {
  let sim: SwitchSimulator;
  let esl: EslManager;
  let app: TestApp;

  beforeAll(async () => {
    sim = await startSwitchSimulator({ password: 'pw' });
    esl = createEslManager({ host: '127.0.0.1', port: sim.port, password: 'pw', logger: quiet, backoff: { initialMs: 20, maxMs: 50 } });
    await waitFor(esl, 'up');
    app = await startTestApp({}, { esl });
  });
  afterAll(async () => {
    await app.close();
    await esl.close();
    await sim.stop();
  });

  it('is ok while the link is up', async () => {
    const res = await app.request('GET', '/healthz');
    expect(res.body).toMatchObject({ status: 'ok', checks: { database: 'ok', switch: 'ok' } });
  });

  it('is degraded while the link is down', async () => {
    const down = createEslManager({ host: '127.0.0.1', port: await freePort(), password: 'pw', logger: quiet, backoff: { initialMs: 1000, maxMs: 1000 } });
    const other = await startTestApp({}, { esl: down });
    try {
      const res = await other.request('GET', '/healthz');
      expect(res.body).toMatchObject({ status: 'degraded', checks: { database: 'ok', switch: 'down' } });
    } finally {
      await other.close();
      await down.close();
    }
  });
});

describe('switch errors in the one error envelope', () => {
  const appThrowing = (err: unknown) => {
    const app = new Hono();
    app.get('/x', () => {
      throw err;
    });
    app.onError(errorHandler() as never);
    return app;
  };

  it('answers 503 esl_unavailable when the link is down', async () => {
    const res = await appThrowing(new EslUnavailableError('link down')).request('/x');
    expect(res.status).toBe(503);
    expect(((await res.json()) as any).error.code).toBe('esl_unavailable');
  });

  it('answers 502 dial_error when the switch refuses a command', async () => {
    const res = await appThrowing(new EslCommandError('originate', '-ERR USER_BUSY')).request('/x');
    expect(res.status).toBe(502);
    expect(((await res.json()) as any).error.code).toBe('dial_error');
  });
});
