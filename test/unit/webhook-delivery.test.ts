import { createHmac } from 'node:crypto';
import Stripe from 'stripe';
import { loadConfig } from '../../src/config';
import {
  canRedeliver,
  describeLadder,
  MAX_ATTEMPTS,
  outcomeOf,
  RETRY_CAP_MS,
  RETRY_DELAYS_MS,
  retryDelayMs,
  verdictOf,
} from '../../src/modules/webhooks/webhook-delivery.rules';
import { signatureHeader, verifySignature } from '../../src/modules/webhooks/webhook-signature';

const SECRET = 'whsec_abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG';
const BODY = '{"event":"promise.recorded","event_id":"p-1","occurred_at":"2026-11-24T10:00:00.000Z","tenant_id":"t","data":{"note":"ünïcode"}}';
const T = 1_790_000_000;
const AT_T = new Date(T * 1000);

describe('signatureHeader', () => {
  it('is t=<seconds>,v1=<lowercase hex HMAC-SHA256 of "<t>.<raw body>"> keyed with the whole whsec_ string', () => {
    const header = signatureHeader(SECRET, BODY, T);
    const expected = createHmac('sha256', SECRET).update(`${T}.${BODY}`).digest('hex');
    expect(header).toBe(`t=${T},v1=${expected}`);
    expect(header).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
  });

  it('signs the raw bytes: a string and its UTF-8 buffer sign the same, one changed byte does not', () => {
    expect(signatureHeader(SECRET, Buffer.from(BODY, 'utf8'), T)).toBe(signatureHeader(SECRET, BODY, T));
    expect(signatureHeader(SECRET, `${BODY} `, T)).not.toBe(signatureHeader(SECRET, BODY, T));
  });

  it('refuses a t that is not whole seconds', () => {
    expect(() => signatureHeader(SECRET, BODY, 1.5)).toThrow();
    expect(() => signatureHeader(SECRET, BODY, -1)).toThrow();
  });

  it('is accepted by the maintained Stripe verifier', () => {
    const stripe = new Stripe('sk_test_x');
    const header = signatureHeader(SECRET, BODY, Math.floor(Date.now() / 1000));
    expect(() => stripe.webhooks.signature!.verifyHeader(BODY, header, SECRET)).not.toThrow();
    expect(stripe.webhooks.constructEvent(BODY, header, SECRET)).toMatchObject({ event: 'promise.recorded', event_id: 'p-1' });
    expect(() => stripe.webhooks.signature!.verifyHeader(BODY, header, `${SECRET}x`)).toThrow();
  });
});

describe('verifySignature (the reference receiver check)', () => {
  const header = signatureHeader(SECRET, BODY, T);

  it('ok for the right secret within the tolerance either way', () => {
    expect(verifySignature(header, BODY, [SECRET], AT_T)).toBe('ok');
    expect(verifySignature(header, Buffer.from(BODY), [SECRET], new Date((T + 300) * 1000))).toBe('ok');
    expect(verifySignature(header, BODY, [SECRET], new Date((T - 300) * 1000))).toBe('ok');
  });

  it('ok when any accepted secret matches (a receiver rolling a rotation out)', () => {
    expect(verifySignature(header, BODY, ['whsec_other', SECRET], AT_T)).toBe('ok');
  });

  it('stale outside 5 minutes, whichever way, before any HMAC is computed', () => {
    expect(verifySignature(header, BODY, [SECRET], new Date((T + 301) * 1000))).toBe('stale');
    expect(verifySignature(header, BODY, [SECRET], new Date((T - 301) * 1000))).toBe('stale');
    expect(verifySignature(header, 'tampered', [SECRET], new Date((T + 3600) * 1000))).toBe('stale');
    expect(verifySignature(header, BODY, [SECRET], new Date((T + 20) * 1000), 10)).toBe('stale');
  });

  it('mismatch for another secret, another body or another t', () => {
    expect(verifySignature(header, BODY, ['whsec_other'], AT_T)).toBe('mismatch');
    expect(verifySignature(header, `${BODY}\n`, [SECRET], AT_T)).toBe('mismatch');
    const v1 = header.split('v1=')[1];
    expect(verifySignature(`t=${T + 1},v1=${v1}`, BODY, [SECRET], AT_T)).toBe('mismatch');
    expect(verifySignature(header, BODY, [], AT_T)).toBe('mismatch');
  });

  it('malformed when t or v1 cannot be parsed', () => {
    for (const bad of [
      undefined,
      null,
      '',
      'garbage',
      `v1=${'a'.repeat(64)}`,
      `t=${T}`,
      `t=abc,v1=${'a'.repeat(64)}`,
      `t=${T},v1=${'A'.repeat(64)}`,
      `t=${T},v1=abc`,
      `t=${T},t=${T},v1=${'a'.repeat(64)}`,
      `t=${T},,v1=${'a'.repeat(64)}`,
    ]) {
      expect({ bad, outcome: verifySignature(bad, BODY, [SECRET], AT_T) }).toEqual({ bad, outcome: 'malformed' });
    }
  });

  it('ignores signatures of other schemes next to v1', () => {
    expect(verifySignature(`${header},v0=deadbeef`, BODY, [SECRET], AT_T)).toBe('ok');
  });
});

describe('the retry ladder', () => {
  const mid = () => 0.5;

  it('is 30 s, 2 min, 10 min, 30 min, 1 h, 3 h, 6 h, 12 h, 24 h, 24 h: 11 attempts over about three days', () => {
    expect(RETRY_DELAYS_MS.map((ms) => ms / 1000)).toEqual([30, 120, 600, 1800, 3600, 10800, 21600, 43200, 86400, 86400]);
    expect(MAX_ATTEMPTS).toBe(11);
    const totalHours = RETRY_DELAYS_MS.reduce((a, b) => a + b, 0) / 3_600_000;
    expect(totalHours).toBeGreaterThan(70);
    expect(totalHours).toBeLessThan(72);
    for (let n = 1; n < MAX_ATTEMPTS; n += 1) expect(retryDelayMs(n, { random: mid })).toBe(RETRY_DELAYS_MS[n - 1]);
    expect(describeLadder()).toContain('11 attempts');
  });

  it('never shrinks from one step to the next and stops at the 24 h cap', () => {
    for (let n = 2; n < MAX_ATTEMPTS; n += 1) expect(RETRY_DELAYS_MS[n - 1]!).toBeGreaterThanOrEqual(RETRY_DELAYS_MS[n - 2]!);
    expect(Math.max(...RETRY_DELAYS_MS)).toBe(RETRY_CAP_MS);
  });

  it('jitters ±20 %, and the cap bounds the jittered delay too', () => {
    expect(retryDelayMs(1, { random: () => 0 })).toBe(24_000);
    expect(retryDelayMs(1, { random: () => 0.999999 })).toBeCloseTo(36_000, -1);
    expect(retryDelayMs(9, { random: () => 0 })).toBe(0.8 * RETRY_CAP_MS);
    expect(retryDelayMs(9, { random: () => 0.999999 })).toBe(RETRY_CAP_MS);
    for (let i = 0; i < 1000; i += 1) {
      const d = retryDelayMs(3)!;
      expect(d).toBeGreaterThanOrEqual(480_000);
      expect(d).toBeLessThanOrEqual(720_000);
    }
  });

  it('is over after attempt 11: the delivery is dead', () => {
    expect(retryDelayMs(MAX_ATTEMPTS - 1, { random: mid })).not.toBeNull();
    expect(retryDelayMs(MAX_ATTEMPTS)).toBeNull();
    expect(retryDelayMs(MAX_ATTEMPTS + 5)).toBeNull();
    expect(() => retryDelayMs(0)).toThrow();
  });

  it('scales every delay by WEBHOOK_RETRY_SCALE (tests run the ladder in seconds)', () => {
    expect(retryDelayMs(1, { scale: 0.001, random: mid })).toBe(30);
    const total = RETRY_DELAYS_MS.reduce((sum, _, i) => sum + retryDelayMs(i + 1, { scale: 0.00001, random: () => 0.999999 })!, 0);
    expect(total).toBeLessThan(3_000);
  });

  it('reads WEBHOOK_RETRY_SCALE from the environment: default 1, positive numbers only', () => {
    expect(loadConfig({}).WEBHOOK_RETRY_SCALE).toBe(1);
    expect(loadConfig({ WEBHOOK_RETRY_SCALE: '0.00001' }).WEBHOOK_RETRY_SCALE).toBe(0.00001);
    expect(loadConfig({ WEBHOOK_RETRY_SCALE: '' }).WEBHOOK_RETRY_SCALE).toBe(1);
    expect(() => loadConfig({ WEBHOOK_RETRY_SCALE: '0' })).toThrow(/WEBHOOK_RETRY_SCALE/);
    expect(() => loadConfig({ WEBHOOK_RETRY_SCALE: 'fast' })).toThrow(/WEBHOOK_RETRY_SCALE/);
  });
});

describe('reading an attempt', () => {
  const now = new Date('2026-11-24T10:00:00Z');

  it('any 2xx is delivered, 410 is gone, everything else (3xx included, no answer included) is retried', () => {
    for (const s of [200, 201, 202, 204, 299]) expect(verdictOf(s)).toBe('delivered');
    expect(verdictOf(410)).toBe('gone');
    for (const s of [null, 100, 199, 301, 302, 307, 400, 404, 429, 500, 503]) expect(verdictOf(s)).toBe('retry');
  });

  it('moves the delivery: delivered, cancelled on 410, pending with the next due time, dead after the last attempt', () => {
    expect(outcomeOf(1, 204, now)).toEqual({ status: 'delivered', nextAttemptAt: null });
    expect(outcomeOf(3, 410, now)).toEqual({ status: 'cancelled', nextAttemptAt: null });
    expect(outcomeOf(2, 500, now, { random: () => 0.5 })).toEqual({ status: 'pending', nextAttemptAt: new Date(now.getTime() + 120_000) });
    expect(outcomeOf(MAX_ATTEMPTS, null, now)).toEqual({ status: 'dead', nextAttemptAt: null });
    // A redelivered dead letter continues the count: one more attempt, then dead again.
    expect(outcomeOf(MAX_ATTEMPTS + 1, 500, now)).toEqual({ status: 'dead', nextAttemptAt: null });
  });

  it('redelivers only dead or cancelled deliveries of an enabled endpoint', () => {
    expect(canRedeliver('dead', true)).toEqual({ ok: true });
    expect(canRedeliver('cancelled', true)).toEqual({ ok: true });
    expect(canRedeliver('pending', true).ok).toBe(false);
    expect(canRedeliver('delivered', true).ok).toBe(false);
    expect(canRedeliver('dead', false).ok).toBe(false);
  });
});
