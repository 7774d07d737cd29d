import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { generateKeyPairSync } from 'node:crypto';
import type { ProviderCredential, ResolvedProvider, SmsSendContext, SmsSendRequest } from '../../src/modules/sms/adapters/adapter';
import { adapterFor, CARRIER_A_DEFAULT_BASE_URL, SmsProviderBaseUrlRejected, SmsProviderUnavailable } from '../../src/modules/sms/adapters';
import { ed25519PublicKeyOf } from '../../src/modules/sms-providers/sms-provider.rules';

interface Seen {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: any;
}

/** A loopback provider: answers each request with the next scripted reply and records what it saw. */
async function fakeProvider(reply: (seen: Seen) => { status: number; body: unknown }) {
  const seen: Seen[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const s = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: JSON.parse(Buffer.concat(chunks).toString('utf8') || 'null') };
      seen.push(s);
      const r = reply(s);
      res.writeHead(r.status, { 'content-type': 'application/json' });
      res.end(typeof r.body === 'string' ? r.body : JSON.stringify(r.body));
    });
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { origin, seen, close: () => new Promise<void>((ok) => server.close(() => ok())) };
}

const request: SmsSendRequest = { to: '+15005550006', from: '+15005550001', body: 'Hello', messageId: '11111111-1111-4111-8111-111111111111' };
const DEPLOYMENT: ProviderCredential = { kind: 'deployment' };
const provider = (adapter: ResolvedProvider['adapter'], baseUrl: string | null, credential: ProviderCredential = DEPLOYMENT): ResolvedProvider => ({
  id: null,
  adapter,
  region: 'us',
  baseUrl,
  credential,
});
const context = (allowlist: string[], apiKey: string | null = 'key-123'): SmsSendContext => ({ allowlist, resolver: () => Promise.resolve(['127.0.0.1']), apiKey });

describe('mock adapter (CONTRACT.md section 4)', () => {
  it('accepts with mock-<uuid> and refuses destinations ending in 99', async () => {
    const mock = adapterFor('mock');
    const ok = await mock.send(provider('mock', null), request, context([]));
    expect(ok).toEqual({ accepted: true, providerMessageId: expect.stringMatching(/^mock-[0-9a-f-]{36}$/) });
    const refused = await mock.send(provider('mock', null), { ...request, to: '+15005550099' }, context([]));
    expect(refused).toMatchObject({ accepted: false, errorCode: 'mock_rejected' });
  });
});

describe('http adapter', () => {
  it('POSTs <base_url>/messages with {to, from, text, reference} and takes id or message_id', async () => {
    let n = 0;
    const p = await fakeProvider(() => (n++ === 0 ? { status: 202, body: { id: 'prov-1' } } : { status: 200, body: { message_id: 'prov-2' } }));
    try {
      const http_ = adapterFor('http');
      expect(await http_.send(provider('http', `${p.origin}/api/`), request, context([p.origin]))).toEqual({ accepted: true, providerMessageId: 'prov-1' });
      expect(await http_.send(provider('http', `${p.origin}/api`), request, context([p.origin], null))).toEqual({ accepted: true, providerMessageId: 'prov-2' });
      expect(p.seen[0]).toMatchObject({ method: 'POST', url: '/api/messages', body: { to: request.to, from: request.from, text: 'Hello', reference: request.messageId } });
      expect(p.seen[0]!.headers).toMatchObject({ authorization: 'Bearer key-123', 'content-type': 'application/json', 'idempotency-key': request.messageId });
      expect(p.seen[1]!.headers.authorization).toBeUndefined();
    } finally {
      await p.close();
    }
  });

  it('a 4xx is a refusal result, a 2xx without an id too; a 5xx throws', async () => {
    const replies = [
      { status: 400, body: { error_code: 'invalid_number', message: 'bad to' } },
      { status: 422, body: 'not json' },
      { status: 200, body: {} },
      { status: 503, body: {} },
    ];
    const p = await fakeProvider(() => replies.shift()!);
    try {
      const a = adapterFor('http');
      const base = provider('http', p.origin);
      expect(await a.send(base, request, context([p.origin]))).toEqual({ accepted: false, errorCode: 'invalid_number', detail: 'bad to' });
      expect(await a.send(base, request, context([p.origin]))).toMatchObject({ accepted: false, errorCode: 'http_422' });
      expect(await a.send(base, request, context([p.origin]))).toMatchObject({ accepted: false, errorCode: 'invalid_provider_answer' });
      await expect(a.send(base, request, context([p.origin]))).rejects.toBeInstanceOf(SmsProviderUnavailable);
    } finally {
      await p.close();
    }
  });

  it('a network fault throws (not a refusal)', async () => {
    const p = await fakeProvider(() => ({ status: 200, body: {} }));
    await p.close();
    await expect(adapterFor('http').send(provider('http', p.origin), request, context([p.origin]))).rejects.toBeInstanceOf(SmsProviderUnavailable);
  });

  it('a base_url failing the egress check at send time is SmsProviderBaseUrlRejected, and nothing is sent', async () => {
    const p = await fakeProvider(() => ({ status: 200, body: { id: 'x' } }));
    try {
      const a = adapterFor('http');
      // Not allowlisted: plain http on a loopback origin is refused before any connection.
      const err = await a.send(provider('http', p.origin), request, context([])).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(SmsProviderBaseUrlRejected);
      expect((err as Error).name).toBe('SmsProviderBaseUrlRejected');
      // A public-looking name that now resolves to a private address.
      const rebound: SmsSendContext = { allowlist: [], resolver: () => Promise.resolve(['10.0.0.7']), apiKey: null };
      await expect(a.send(provider('http', 'https://sms.example.com/api'), request, rebound)).rejects.toBeInstanceOf(SmsProviderBaseUrlRejected);
      await expect(a.send(provider('http', null), request, context([]))).rejects.toBeInstanceOf(SmsProviderBaseUrlRejected);
      expect(p.seen).toHaveLength(0);
    } finally {
      await p.close();
    }
  });
});

describe('carrier_a adapter', () => {
  it('POSTs <base>/v2/messages with a bearer and {from, to, text}; accepts {data:{id}}', async () => {
    const replies = [
      { status: 200, body: { data: { id: 'msg-uuid-1', record_type: 'message' } } },
      { status: 422, body: { errors: [{ code: '40300', title: 'Blocked', detail: 'destination blocked' }] } },
      { status: 500, body: {} },
    ];
    const p = await fakeProvider(() => replies.shift()!);
    try {
      const a = adapterFor('carrier_a');
      const base = provider('carrier_a', p.origin);
      expect(await a.send(base, request, context([p.origin]))).toEqual({ accepted: true, providerMessageId: 'msg-uuid-1' });
      expect(p.seen[0]).toMatchObject({ method: 'POST', url: '/v2/messages', body: { from: request.from, to: request.to, text: 'Hello' } });
      expect(p.seen[0]!.body.reference).toBeUndefined();
      expect(p.seen[0]!.headers.authorization).toBe('Bearer key-123');
      expect(await a.send(base, request, context([p.origin]))).toEqual({ accepted: false, errorCode: '40300', detail: 'destination blocked' });
      await expect(a.send(base, request, context([p.origin]))).rejects.toBeInstanceOf(SmsProviderUnavailable);
    } finally {
      await p.close();
    }
  });

  it('defaults to the public API, under the same egress check', async () => {
    expect(CARRIER_A_DEFAULT_BASE_URL).toBe('https://api.telnyx.com');
    const rebound: SmsSendContext = { allowlist: [], resolver: () => Promise.resolve(['192.168.1.1']), apiKey: 'k' };
    await expect(adapterFor('carrier_a').send(provider('carrier_a', null), request, rebound)).rejects.toBeInstanceOf(SmsProviderBaseUrlRejected);
  });
});

describe('the bearer each adapter presents is the one resolution chose', () => {
  it.each(['http', 'carrier_a'] as const)('%s: the own key, the deployment key only for a deployment credential, else no header', async (name) => {
    const reply = name === 'http' ? { status: 202, body: { id: 'p' } } : { status: 200, body: { data: { id: 'p' } } };
    const p = await fakeProvider(() => reply);
    try {
      const a = adapterFor(name);
      // The context always carries the deployment's key here: only the credential decides whether it is presented.
      await a.send(provider(name, p.origin, { kind: 'own', apiKey: 'tenant-own-key' }), request, context([p.origin], 'platform-key'));
      await a.send(provider(name, p.origin, { kind: 'none' }), request, context([p.origin], 'platform-key'));
      await a.send(provider(name, p.origin, DEPLOYMENT), request, context([p.origin], 'platform-key'));
      await a.send(provider(name, p.origin, DEPLOYMENT), request, context([p.origin], null));
      expect(p.seen.map((s) => s.headers.authorization)).toEqual(['Bearer tenant-own-key', undefined, 'Bearer platform-key', undefined]);
    } finally {
      await p.close();
    }
  });
});

describe('carrier_a webhook key', () => {
  it('reads raw, SPKI and PEM forms of an Ed25519 key and refuses others', () => {
    const { publicKey } = generateKeyPairSync('ed25519');
    const spki = publicKey.export({ format: 'der', type: 'spki' });
    for (const form of [spki.subarray(12).toString('base64'), spki.toString('base64'), publicKey.export({ format: 'pem', type: 'spki' }).toString()]) {
      expect(ed25519PublicKeyOf(form)?.equals(publicKey)).toBe(true);
    }
    const x25519 = generateKeyPairSync('x25519').publicKey.export({ format: 'der', type: 'spki' }).toString('base64');
    for (const bad of ['', 'abc', Buffer.alloc(33).toString('base64'), x25519, 'whsec_abc']) expect(ed25519PublicKeyOf(bad)).toBeNull();
  });
});

describe('adapterFor', () => {
  it('knows the three protocols and nothing else', () => {
    expect(['http', 'carrier_a', 'mock'].map((n) => adapterFor(n as 'http').name)).toEqual(['http', 'carrier_a', 'mock']);
    expect(() => adapterFor('smpp' as 'http')).toThrow(/no SMS adapter/);
  });
});
