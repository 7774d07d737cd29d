import { checkEgressUrl, EgressRefusedError, isPublicAddress, originOf, type EgressRefusal, type Resolver } from '../../src/lib/egress';

const PUBLIC_V4 = '93.184.216.34';
const PUBLIC_V6 = '2606:4700:4700::1111';

/** A DNS that answers from a table; a name it does not know fails like NXDOMAIN. */
function fakeDns(table: Record<string, string[]>): Resolver & { asked: string[] } {
  const asked: string[] = [];
  const resolve = (host: string) => {
    asked.push(host);
    const answer = table[host];
    if (answer === undefined) return Promise.reject(Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' }));
    return Promise.resolve(answer);
  };
  return Object.assign(resolve, { asked });
}

async function refusal(url: string, policy: Parameters<typeof checkEgressUrl>[1]): Promise<{ reason: EgressRefusal; message: string }> {
  try {
    await checkEgressUrl(url, policy);
  } catch (err) {
    if (err instanceof EgressRefusedError) return { reason: err.reason, message: err.message };
    throw err;
  }
  throw new Error(`${url} was accepted`);
}

describe('isPublicAddress', () => {
  it.each([
    ['loopback v4, start', '127.0.0.1'],
    ['loopback v4, end', '127.255.255.255'],
    ['loopback v6', '::1'],
    ['RFC 1918 10/8, start', '10.0.0.0'],
    ['RFC 1918 10/8, end', '10.255.255.255'],
    ['RFC 1918 172.16/12, start', '172.16.0.0'],
    ['RFC 1918 172.16/12, end', '172.31.255.255'],
    ['RFC 1918 192.168/16, start', '192.168.0.0'],
    ['RFC 1918 192.168/16, end', '192.168.255.255'],
    ['CGNAT 100.64/10, first', '100.64.0.0'],
    ['CGNAT 100.64/10, last', '100.127.255.255'],
    ['link-local 169.254/16, start', '169.254.0.1'],
    ['link-local 169.254/16, end', '169.254.255.254'],
    ['link-local fe80::/10, start', 'fe80::1'],
    ['link-local fe80::/10, end', 'febf:ffff::1'],
    ['unique-local fc00::/7 (fc)', 'fc00::1'],
    ['unique-local fc00::/7 (fd)', 'fdff:ffff::1'],
    ['multicast v4, start', '224.0.0.1'],
    ['multicast v4, end', '239.255.255.255'],
    ['multicast v6', 'ff02::1'],
    ['multicast v6, global scope', 'ff0e::101'],
    ['this network 0.0.0.0/8', '0.0.0.0'],
    ['this network 0.0.0.0/8, end', '0.255.255.255'],
    ['unspecified v6', '::'],
    ['broadcast', '255.255.255.255'],
    ['reserved 240/4', '240.0.0.1'],
    ['metadata (AWS, GCP, Azure)', '169.254.169.254'],
    ['metadata (ECS task)', '169.254.170.2'],
    ['metadata (Alibaba)', '100.100.100.200'],
    ['metadata (AWS IPv6)', 'fd00:ec2::254'],
    ['IPv4-mapped loopback', '::ffff:127.0.0.1'],
    ['IPv4-mapped 10/8', '::ffff:10.1.2.3'],
    ['IPv4-mapped 192.168/16 in hex', '::ffff:c0a8:101'],
    ['IPv4-mapped metadata', '::ffff:169.254.169.254'],
    ['IPv4-mapped CGNAT', '::ffff:100.64.0.1'],
    ['IPv4-compatible loopback', '::127.0.0.1'],
    ['IPv4-compatible loopback in hex', '::7f00:1'],
    ['NAT64 of a private address', '64:ff9b::a00:1'],
    ['6to4 of loopback', '2002:7f00:1::1'],
    ['documentation 192.0.2/24', '192.0.2.10'],
    ['documentation 198.51.100/24', '198.51.100.10'],
    ['documentation 203.0.113/24', '203.0.113.10'],
    ['documentation 2001:db8::/32', '2001:db8::1'],
    ['IETF protocol assignments 192.0.0/24', '192.0.0.8'],
    ['benchmarking 198.18/15', '198.19.255.255'],
    ['deprecated site-local fec0::/10', 'fec0::1'],
  ])('refuses %s (%s)', (_name, address) => {
    expect(isPublicAddress(address)).toBe(false);
  });

  it.each([
    ['public v4', PUBLIC_V4],
    ['public v4 (8.8.8.8)', '8.8.8.8'],
    ['just below CGNAT', '100.63.255.255'],
    ['just above CGNAT', '100.128.0.0'],
    ['just below 172.16/12', '172.15.255.255'],
    ['just above 172.16/12', '172.32.0.0'],
    ['just above 192.168/16', '192.169.0.0'],
    ['just below multicast', '223.255.255.255'],
    ['public v6', PUBLIC_V6],
    ['public v6 (Google)', '2001:4860:4860::8888'],
    ['IPv4-mapped public address', '::ffff:8.8.8.8'],
  ])('accepts %s (%s)', (_name, address) => {
    expect(isPublicAddress(address)).toBe(true);
  });

  it.each(['', 'example.com', '256.1.1.1', 'fe80::1::2', 'not an address'])('refuses what is not an address: %j', (value) => {
    expect(isPublicAddress(value)).toBe(false);
  });

  it.each(['2130706433', '0x7f.1', '017700000001', '127.1'])('judges a non-canonical spelling by the address it denotes (loopback): %s', (value) => {
    expect(isPublicAddress(value)).toBe(false);
  });
});

describe('checkEgressUrl', () => {
  const dns = fakeDns({
    'hooks.example.com': [PUBLIC_V4, PUBLIC_V6],
    'v6only.example.com': [PUBLIC_V6],
    'private.example.com': ['10.0.0.5'],
    'mixed.example.com': [PUBLIC_V4, '192.168.1.10'],
    'mixed6.example.com': [PUBLIC_V6, 'fd12::1'],
    'mapped.example.com': ['::ffff:127.0.0.1'],
    'meta.example.com': ['169.254.169.254'],
    'cgnat.example.com': ['100.64.1.1'],
    'empty.example.com': [],
  });
  const policy = { allowlist: [] as string[], resolve: dns };

  it('accepts https on 443 to a name resolving only to public addresses, and returns the parsed URL', async () => {
    const url = await checkEgressUrl('https://hooks.example.com/dialer?x=1', policy);
    expect(url.href).toBe('https://hooks.example.com/dialer?x=1');
    expect((await checkEgressUrl('https://HOOKS.example.com:443/a', policy)).href).toBe('https://hooks.example.com/a');
    expect((await checkEgressUrl('https://v6only.example.com/', policy)).hostname).toBe('v6only.example.com');
    expect((await checkEgressUrl('https://hooks.example.com./', policy)).hostname).toBe('hooks.example.com.');
  });

  it.each<[EgressRefusal, string]>([
    ['invalid_url', 'not a url'],
    ['invalid_url', '/relative/path'],
    ['invalid_url', ''],
    ['credentials_in_url', 'https://user:pass@hooks.example.com/'],
    ['credentials_in_url', 'https://user@hooks.example.com/'],
    ['not_https', 'http://hooks.example.com/'],
    ['not_https', 'ftp://hooks.example.com/'],
    ['not_https', 'file:///etc/passwd'],
    ['not_https', 'gopher://hooks.example.com/'],
    ['not_port_443', 'https://hooks.example.com:8443/'],
    ['not_port_443', 'https://hooks.example.com:80/'],
    ['ip_literal', 'https://93.184.216.34/'],
    ['ip_literal', 'https://127.0.0.1/'],
    ['ip_literal', 'https://[::1]/'],
    ['ip_literal', 'https://[2606:4700:4700::1111]/'],
    ['ip_literal', 'https://[::ffff:127.0.0.1]/'],
    ['ip_literal', 'https://2130706433/'],
    ['ip_literal', 'https://0x7f.1/'],
    ['ip_literal', 'https://127.1/'],
    ['metadata_name', 'https://metadata.google.internal/computeMetadata/v1/'],
    ['metadata_name', 'https://metadata/'],
    ['metadata_name', 'https://instance-data.ec2.internal/'],
    ['internal_name', 'https://localhost/'],
    ['internal_name', 'https://LOCALHOST./'],
    ['internal_name', 'https://intranet/'],
    ['internal_name', 'https://printer.local/'],
    ['internal_name', 'https://api.localhost/'],
    ['internal_name', 'https://db.internal/'],
    ['internal_name', 'https://hooks.corp/'],
    ['internal_name', 'https://nas.lan/'],
    ['internal_name', 'https://router.home.arpa/'],
    ['unresolvable', 'https://nxdomain.example.com/'],
    ['unresolvable', 'https://empty.example.com/'],
    ['non_public_address', 'https://private.example.com/'],
    ['non_public_address', 'https://mixed.example.com/'],
    ['non_public_address', 'https://mixed6.example.com/'],
    ['non_public_address', 'https://mapped.example.com/'],
    ['non_public_address', 'https://meta.example.com/'],
    ['non_public_address', 'https://cgnat.example.com/'],
  ])('refuses %s: %s', async (reason, url) => {
    expect((await refusal(url, policy)).reason).toBe(reason);
  });

  it('never echoes a resolved address in its message', async () => {
    for (const host of ['private.example.com', 'mixed.example.com', 'meta.example.com', 'mapped.example.com']) {
      const { message } = await refusal(`https://${host}/`, policy);
      expect(message).not.toMatch(/\d+\.\d+\.\d+\.\d+|::/);
    }
  });

  it('refuses a name with one public and one private address whichever comes first', async () => {
    const reversed = fakeDns({ 'flip.example.com': ['192.168.1.10', PUBLIC_V4] });
    expect((await refusal('https://flip.example.com/', { allowlist: [], resolve: reversed })).reason).toBe('non_public_address');
    expect((await refusal('https://mixed.example.com/', policy)).reason).toBe('non_public_address');
  });

  it('does not ask DNS about names refused by their form', async () => {
    const counting = fakeDns({});
    for (const url of ['http://hooks.example.com/', 'https://127.0.0.1/', 'https://localhost/', 'https://metadata.google.internal/', 'https://a.example.com:8443/']) {
      await refusal(url, { allowlist: [], resolve: counting });
    }
    expect(counting.asked).toEqual([]);
  });

  it('resolves the host without a trailing dot', async () => {
    const counting = fakeDns({ 'hooks.example.com': [PUBLIC_V4] });
    await checkEgressUrl('https://hooks.example.com./x', { allowlist: [], resolve: counting });
    expect(counting.asked).toEqual(['hooks.example.com']);
  });

  describe('EGRESS_ALLOWLIST', () => {
    it('lets an allowlisted origin use http on another port and a loopback address, without DNS', async () => {
      const counting = fakeDns({});
      const allow = { allowlist: ['http://127.0.0.1:8089'], resolve: counting };
      expect((await checkEgressUrl('http://127.0.0.1:8089/hook', allow)).href).toBe('http://127.0.0.1:8089/hook');
      expect(counting.asked).toEqual([]);
    });

    it('lets an allowlisted name through whatever it resolves to', async () => {
      const allow = { allowlist: ['http://receiver.test:3000'], resolve: fakeDns({ 'receiver.test': ['127.0.0.1'] }) };
      expect((await checkEgressUrl('http://receiver.test:3000/x', allow)).host).toBe('receiver.test:3000');
    });

    it('matches the whole origin: another port, scheme or host is checked as usual', async () => {
      const allow = { allowlist: ['http://127.0.0.1:8089'], resolve: dns };
      expect((await refusal('http://127.0.0.1:8090/', allow)).reason).toBe('not_https');
      expect((await refusal('https://127.0.0.1:8089/', allow)).reason).toBe('not_port_443');
      expect((await refusal('http://127.0.0.2:8089/', allow)).reason).toBe('not_https');
    });

    it('normalizes its entries: case, a trailing slash and an omitted default port', async () => {
      const allow = { allowlist: ['HTTP://Receiver.Test:3000/', 'https://127.0.0.1'], resolve: fakeDns({}) };
      expect((await checkEgressUrl('http://receiver.test:3000/x', allow)).hostname).toBe('receiver.test');
      expect((await checkEgressUrl('https://127.0.0.1/x', allow)).hostname).toBe('127.0.0.1');
    });

    it('still refuses credentials in an allowlisted URL', async () => {
      const allow = { allowlist: ['http://127.0.0.1:8089'], resolve: dns };
      expect((await refusal('http://u:p@127.0.0.1:8089/', allow)).reason).toBe('credentials_in_url');
    });
  });
});

describe('originOf', () => {
  it('spells scheme://host:port with the default port filled in and the host lowercased', () => {
    expect(originOf(new URL('https://Hooks.Example.com/x'))).toBe('https://hooks.example.com:443');
    expect(originOf(new URL('http://a.example:8080/'))).toBe('http://a.example:8080');
    expect(originOf(new URL('http://a.example/'))).toBe('http://a.example:80');
  });
});
