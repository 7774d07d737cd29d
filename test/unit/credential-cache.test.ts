import { CredentialCache } from '../../src/lib/credential-cache';

describe('CredentialCache', () => {
  let now = 0;
  const cache = (ttlMs: number, maxEntries?: number) => new CredentialCache<string>({ ttlMs, maxEntries, now: () => now });

  beforeEach(() => {
    now = 1_000_000;
  });

  it('answers a kept credential until its TTL, then forgets it', () => {
    const c = cache(1000);
    c.set('h1', 't1', 'alice');
    expect(c.get('h1')).toBe('alice');
    now += 999;
    expect(c.get('h1')).toBe('alice');
    now += 1;
    expect(c.get('h1')).toBeNull();
    expect(c.size).toBe(0);
  });

  it('never keeps a credential past its own expiry', () => {
    const c = cache(1000);
    c.set('h1', 't1', 'session', now + 200);
    now += 200;
    expect(c.get('h1')).toBeNull();
    c.set('h2', 't1', 'expired', now - 1);
    expect(c.get('h2')).toBeNull();
    expect(c.size).toBe(0);
  });

  it('keeps nothing with a TTL of 0', () => {
    const c = cache(0);
    c.set('h1', 't1', 'alice');
    expect(c.get('h1')).toBeNull();
  });

  it('forgets one tenant’s credentials and keeps the others', () => {
    const c = cache(1000);
    c.set('a1', 'tA', 'a1');
    c.set('a2', 'tA', 'a2');
    c.set('b1', 'tB', 'b1');
    c.forgetTenant('tA');
    expect([c.get('a1'), c.get('a2'), c.get('b1')]).toEqual([null, null, 'b1']);
    c.clear();
    expect(c.get('b1')).toBeNull();
  });

  it('drops the oldest entry when full, and a re-set entry counts as new', () => {
    const c = cache(1000, 2);
    c.set('h1', 't', '1');
    c.set('h2', 't', '2');
    c.set('h1', 't', '1 again');
    c.set('h3', 't', '3');
    expect([c.get('h1'), c.get('h2'), c.get('h3')]).toEqual(['1 again', null, '3']);
    expect(c.size).toBe(2);
  });
});
