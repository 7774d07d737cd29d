import { checkLabel, checkOrigin, normalizeOrigin } from '../../src/modules/widget-origins/widget-origin.rules';

describe('normalizeOrigin', () => {
  it.each([
    ['https://crm.acme.example', 'https://crm.acme.example'],
    ['https://crm.acme.example/', 'https://crm.acme.example'],
    ['HTTPS://CRM.Acme.Example', 'https://crm.acme.example'],
    ['https://crm.acme.example:443', 'https://crm.acme.example'],
    ['https://crm.acme.example:8443', 'https://crm.acme.example:8443'],
    ['  https://crm.acme.example  ', 'https://crm.acme.example'],
    ['http://localhost:3000', 'http://localhost:3000'],
    ['http://LOCALHOST', 'http://localhost'],
    ['http://127.0.0.1:8080/', 'http://127.0.0.1:8080'],
    ['http://localhost:80', 'http://localhost'],
    ['https://localhost', 'https://localhost'],
    ['https://10.1.2.3', 'https://10.1.2.3'],
    ['https://bücher.example', 'https://xn--bcher-kva.example'],
  ])('%s → %s', (raw, expected) => {
    expect(normalizeOrigin(raw)).toBe(expected);
  });

  it.each([
    ['empty', ''],
    ['blank', '   '],
    ['the opaque origin', 'null'],
    ['no scheme', 'crm.acme.example'],
    ['plain http to a public host', 'http://crm.acme.example'],
    ['plain http to another loopback address', 'http://127.0.0.2'],
    ['a path', 'https://crm.acme.example/app'],
    ['a path of one slash more', 'https://crm.acme.example//'],
    ['a query', 'https://crm.acme.example/?a=1'],
    ['an empty query', 'https://crm.acme.example?'],
    ['a fragment', 'https://crm.acme.example#x'],
    ['an empty fragment', 'https://crm.acme.example#'],
    ['userinfo', 'https://user:pw@crm.acme.example'],
    ['a user only', 'https://user@crm.acme.example'],
    ['another scheme', 'ftp://crm.acme.example'],
    ['a websocket scheme', 'wss://crm.acme.example'],
    ['a backslash the URL parser would repair', 'https:\\\\crm.acme.example'],
    ['a missing authority slash', 'https:crm.acme.example'],
    ['an IPv6 literal', 'https://[::1]'],
    ['a port out of range', 'https://crm.acme.example:70000'],
    ['inner whitespace', 'https://crm acme.example'],
    ['an overlong value', `https://${'a'.repeat(300)}.example`],
  ])('refuses %s', (_label, raw) => {
    expect(normalizeOrigin(raw)).toBeNull();
  });
});

describe('checkOrigin and checkLabel', () => {
  it('answers 422 unprocessable for a value that is not an origin', () => {
    expect(() => checkOrigin('https://a.example/path')).toThrow(expect.objectContaining({ status: 422, code: 'unprocessable' }));
    expect(checkOrigin('https://A.example')).toBe('https://a.example');
  });

  it('trims a label, defaults it to empty and caps it at 200 characters', () => {
    expect(checkLabel(undefined)).toBe('');
    expect(checkLabel('  Main CRM ')).toBe('Main CRM');
    expect(checkLabel('é'.repeat(200))).toBe('é'.repeat(200));
    expect(() => checkLabel('x'.repeat(201))).toThrow(expect.objectContaining({ status: 422, code: 'unprocessable' }));
  });
});
