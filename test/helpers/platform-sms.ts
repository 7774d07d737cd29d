import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { HttpResult, TestApp } from './harness';

/** A text the platform's provider received: what the http adapter posted to `<base>/messages`. */
export interface PlatformText {
  to: string;
  from: string | null;
  text: string;
  authorization: string | undefined;
}

/**
 * A loopback SMS provider speaking the http protocol, standing for the deployment's own SMS account
 * (SMS_PROVIDER_ADAPTER=http at this origin, which EGRESS_ALLOWLIST lets through as a public host
 * would pass). It records every text it accepts; `refuse` makes it answer 400 like a provider that
 * will not deliver. Tests learn verification codes only from here, as the holder of the number would.
 */
export async function startPlatformSms() {
  const received: PlatformText[] = [];
  const state = { refuse: false };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (state.refuse) {
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error_code: 'unroutable', message: 'refused by the test provider' }));
        return;
      }
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { to: string; from: string | null; text: string };
      received.push({ to: body.to, from: body.from ?? null, text: body.text, authorization: req.headers.authorization });
      res.writeHead(202, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ id: `platform-${randomUUID()}` }));
    });
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const apiKey = `platform-key-${randomUUID()}`;
  return {
    origin,
    apiKey,
    received,
    state,
    /** The environment of an app whose deployment SMS provider is this receiver. */
    env: (): Record<string, string> => ({ EGRESS_ALLOWLIST: origin, SMS_PROVIDER_ADAPTER: 'http', SMS_PROVIDER_BASE_URL: `${origin}/platform`, SMS_PROVIDER_API_KEY: apiKey }),
    /** The verification codes texted to a number, oldest first. */
    codesTo: (to: string): string[] =>
      received.filter((r) => r.to === to).map((r) => /verification code is (\d{6})\b/.exec(r.text)?.[1]).filter((c): c is string => c !== undefined),
    close: () => new Promise<void>((ok) => server.close(() => ok())),
  };
}

export type PlatformSms = Awaited<ReturnType<typeof startPlatformSms>>;

/**
 * A customer DID made active the way a tenant does it: registered (a code texted to the number),
 * then confirmed with the code the provider received. Returns the active DID.
 */
export async function claimDid(app: TestApp, platform: PlatformSms, apiKey: string, e164: string, body: Record<string, unknown> = {}) {
  const created: HttpResult = await app.request('POST', '/v1/dids', { token: apiKey, body: { e164, ...body } });
  if (created.status !== 201) throw new Error(`registering ${e164}: ${created.status} ${created.text}`);
  const code = platform.codesTo(e164).at(-1);
  if (!code) throw new Error(`no code reached ${e164}`);
  const verified: HttpResult = await app.request('POST', `/v1/dids/${created.body.did.id}/verify`, { token: apiKey, body: { code } });
  if (verified.status !== 200) throw new Error(`verifying ${e164}: ${verified.status} ${verified.text}`);
  return verified.body.did as Record<string, any> & { id: string; e164: string; status: string };
}
