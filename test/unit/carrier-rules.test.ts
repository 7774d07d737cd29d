import { AppError } from '../../src/lib/errors';
import {
  assertPublicSipProxy,
  assertPublicSources,
  carrierGatewayName,
  nameOf,
  normalizedSource,
  sipProxyOf,
  sourceIpsOf,
  SOURCE_IPS_MAX,
} from '../../src/modules/carriers/carrier.rules';

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

/** The public-address rules judge where a well-formed value points: 422 unprocessable. */
const refusedMessage = (work: () => unknown): string => {
  try {
    work();
  } catch (err) {
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).code).toBe('unprocessable');
    return (err as AppError).message;
  }
  throw new Error('expected a 422 unprocessable');
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

  describe('public-address rules of the SIP edge (as the egress check)', () => {
    const none: string[] = [];

    it.each([
      ['loopback', '127.0.0.1'],
      ['private 10/8', '10.1.2.3:5060'],
      ['private 192.168/16', '192.168.1.1'],
      ['CGNAT', '100.64.0.7'],
      ['link-local', '169.254.10.10'],
      ['cloud metadata', '169.254.169.254'],
      ['the unspecified address', '0.0.0.0'],
      ['IPv6 loopback', '[::1]:5060'],
      ['IPv6 unique-local', '[fd00::1]'],
      ['IPv4-mapped private', '[::ffff:10.0.0.1]'],
      ['a documentation block', '203.0.113.7'],
    ])('sip_proxy at %s (%s) is 422 unprocessable naming sip_proxy', (_what, proxy) => {
      expect(refusedMessage(() => assertPublicSipProxy(proxy, null, none))).toMatch(/^sip_proxy .*not a public address/);
    });

    it.each(['localhost', 'metadata.google.internal', 'sbc.internal', 'pbx.local', 'intranet'])('sip_proxy naming %s is refused without a lookup', (name) => {
      expect(refusedMessage(() => assertPublicSipProxy(name, ['8.8.8.8'], none))).toMatch(/^sip_proxy .*internal host name/);
    });

    it('a host name is judged by every address it resolves to; one that does not resolve is refused', () => {
      expect(() => assertPublicSipProxy('sip.carrier.example:5060', ['8.8.8.8', '2606:4700::1111'], none)).not.toThrow();
      expect(refusedMessage(() => assertPublicSipProxy('sip.carrier.example', ['8.8.8.8', '10.0.0.5'], none))).toMatch(/resolves to a non-public address/);
      expect(refusedMessage(() => assertPublicSipProxy('sip.carrier.example', ['169.254.169.254'], none))).toMatch(/resolves to a non-public address/);
      expect(refusedMessage(() => assertPublicSipProxy('sip.carrier.example', [], none))).toMatch(/does not resolve/);
      expect(refusedMessage(() => assertPublicSipProxy('sip.carrier.example', null, none))).toMatch(/does not resolve/);
    });

    it('public addresses pass', () => {
      for (const proxy of ['8.8.8.8', '8.8.8.8:5060', '[2606:4700::1111]:5061']) expect(() => assertPublicSipProxy(proxy, null, none)).not.toThrow();
    });

    it('SIP_EDGE_ALLOWLIST exempts the addresses, blocks and host names it lists', () => {
      const allow = ['10.20.0.0/16', '127.0.0.1/32', 'sbc.corp.example', 'fd00::/8'];
      expect(() => assertPublicSipProxy('10.20.3.4:5060', null, allow)).not.toThrow();
      expect(() => assertPublicSipProxy('127.0.0.1', null, allow)).not.toThrow();
      expect(() => assertPublicSipProxy('[fd00::7]', null, allow)).not.toThrow();
      expect(() => assertPublicSipProxy('sbc.corp.example:5080', null, allow)).not.toThrow();
      expect(() => assertPublicSipProxy('edge.carrier.example', ['10.20.9.9'], allow)).not.toThrow();
      expect(refusedMessage(() => assertPublicSipProxy('10.21.0.1', null, allow))).toMatch(/sip_proxy/);
      expect(refusedMessage(() => assertPublicSipProxy('169.254.169.254', null, allow))).toMatch(/sip_proxy/);
    });

    it('source_ips: every address of each block must be public, naming the index; allowlisted blocks pass', () => {
      expect(() => assertPublicSources(['8.8.8.8', '8.8.4.0/24', '2606:4700::/32'], none)).not.toThrow();
      expect(refusedMessage(() => assertPublicSources(['8.8.8.8', '10.0.0.1'], none))).toMatch(/^source_ips\[1\] 10\.0\.0\.1 is not a public address/);
      // A block whose first and last addresses are public but that holds 10.0.0.0/8.
      expect(refusedMessage(() => assertPublicSources(['8.0.0.0/4'], none))).toMatch(/source_ips\[0\]/);
      expect(refusedMessage(() => assertPublicSources(['0.0.0.0/0'], none))).toMatch(/source_ips\[0\]/);
      expect(refusedMessage(() => assertPublicSources(['169.254.169.254'], none))).toMatch(/source_ips\[0\]/);
      expect(refusedMessage(() => assertPublicSources(['100.64.0.0/10'], none))).toMatch(/source_ips\[0\]/);
      expect(refusedMessage(() => assertPublicSources(['fe80::/10'], none))).toMatch(/source_ips\[0\]/);
      expect(() => assertPublicSources(['10.20.1.0/24', '10.20.0.9'], ['10.20.0.0/16'])).not.toThrow();
      expect(refusedMessage(() => assertPublicSources(['10.0.0.0/8'], ['10.20.0.0/16']))).toMatch(/source_ips\[0\]/);
    });
  });

  it('the switch gateway of a carrier is derived from its id', () => {
    expect(carrierGatewayName('0B5D3C38-2A6E-4C1B-9F5E-1D2C3B4A5F60')).toBe('carrier-0b5d3c38-2a6e-4c1b-9f5e-1d2c3b4a5f60');
  });
});
