import { AppError } from '../../src/lib/errors';
import { nameOf, normalizedSource, sipProxyOf, sourceIpsOf, SOURCE_IPS_MAX } from '../../src/modules/carriers/carrier.rules';

const invalidMessage = (work: () => unknown): string => {
  try {
    work();
  } catch (err) {
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).code).toBe('invalid');
    return (err as AppError).message;
  }
  throw new Error('expected a 400 invalid');
};

describe('carrier rules', () => {
  it.each([
    ['sip.carrier.example', 'sip.carrier.example'],
    [' SIP.Carrier.Example:5060 ', 'sip.carrier.example:5060'],
    ['edge-1.example.com.:65535', 'edge-1.example.com.:65535'],
    ['203.0.113.7', '203.0.113.7'],
    ['203.0.113.7:5080', '203.0.113.7:5080'],
    ['[2001:db8::1]', '[2001:db8::1]'],
    ['[2001:DB8::1]:5061', '[2001:db8::1]:5061'],
    ['localhost', 'localhost'],
  ])('sip_proxy %s is accepted as %s', (raw, stored) => {
    expect(sipProxyOf(raw)).toBe(stored);
  });

  it('a blank or null sip_proxy is none', () => {
    expect(sipProxyOf(null)).toBeNull();
    expect(sipProxyOf('   ')).toBeNull();
  });

  it.each([
    'sip:carrier.example',
    'carrier.example/path',
    'carrier.example:0',
    'carrier.example:65536',
    'carrier.example:50a',
    'carrier.example:',
    'carrier..example',
    '-carrier.example',
    'carrier_x.example',
    '256.1.1.1',
    '1.2.3',
    '2001:db8::1',
    '[2001:db8::zz]',
    '[2001:db8::1]:0',
    'user@carrier.example',
    `${'a'.repeat(250)}.example`,
  ])('sip_proxy %s is 400 invalid', (raw) => {
    expect(invalidMessage(() => sipProxyOf(raw))).toMatch(/sip_proxy/);
  });

  it.each([
    ['203.0.113.10', '203.0.113.10'],
    [' 198.51.100.0/24 ', '198.51.100.0/24'],
    ['2001:DB8:0:0:0:0:0:1', '2001:db8::1'],
    ['2001:db8::/32', '2001:db8::/32'],
    ['0.0.0.0/0', '0.0.0.0/0'],
  ])('source %s normalizes to %s', (raw, stored) => {
    expect(normalizedSource(raw)).toBe(stored);
  });

  it.each(['', 'example.com', '10.0.0.1/33', '2001:db8::/129', '10.0.0/8', '010.0.0.1', '10.0.0.1/', '1.2.3.4.5'])('source %s is refused', (raw) => {
    expect(normalizedSource(raw)).toBeNull();
  });

  it('source_ips: names the bad index, refuses duplicates after normalization and caps the count', () => {
    expect(sourceIpsOf([])).toEqual([]);
    expect(invalidMessage(() => sourceIpsOf(['10.0.0.1', 'nope']))).toMatch(/source_ips\[1\]/);
    expect(invalidMessage(() => sourceIpsOf(['2001:db8::1', '2001:DB8:0::1']))).toMatch(/twice/);
    const many = Array.from({ length: SOURCE_IPS_MAX + 1 }, (_, i) => `10.0.${Math.floor(i / 200)}.${i % 200}`);
    expect(invalidMessage(() => sourceIpsOf(many))).toMatch(/at most/);
    expect(sourceIpsOf(many.slice(0, SOURCE_IPS_MAX))).toHaveLength(SOURCE_IPS_MAX);
  });

  it('name: trimmed, 1 to 200 characters', () => {
    expect(nameOf('  Acme ')).toBe('Acme');
    expect(nameOf('é'.repeat(200))).toHaveLength(200);
    expect(invalidMessage(() => nameOf(' '))).toMatch(/name/);
    expect(invalidMessage(() => nameOf('x'.repeat(201)))).toMatch(/name/);
  });
});
