import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { NOT_FOUND_XML, userXml } from '../../src/modules/switch-directory/switch-directory.xml';
import type { SwitchSimulator } from '../../src/switch/simulator';

/**
 * A stand-in for the product's switch directory, for simulator-level tests that run no API: it
 * serves user `u<extension>` with password `pw-u<extension>` (number-alias the extension) to a
 * caller presenting its basic-auth credentials, and FreeSWITCH's not-found document otherwise.
 */
export interface FakeDirectory {
  url: string;
  credentials: string;
  requests: Array<Record<string, string>>;
  close(): Promise<void>;
}

export const fakeUsername = (extension: string) => `u${extension}`;
export const fakePassword = (extension: string) => `pw-u${extension}`;

export async function startFakeDirectory(): Promise<FakeDirectory> {
  const credentials = 'freeswitch:fake-directory-token';
  const requests: Array<Record<string, string>> = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      if (req.headers.authorization !== `Basic ${Buffer.from(credentials).toString('base64')}`) {
        res.writeHead(401).end();
        return;
      }
      const form = Object.fromEntries(new URLSearchParams(body));
      requests.push(form);
      const m = /^u([A-Za-z0-9._-]+)$/.exec(form.user ?? '');
      res.writeHead(200, { 'Content-Type': 'text/xml' });
      res.end(m ? userXml({ domain: form.domain ?? '', username: form.user!, extension: m[1]!, password: fakePassword(m[1]!) }) : NOT_FOUND_XML);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/directory`, credentials, requests, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

/** The `sim_register` arguments of a softphone of `target` (`<ext>[@<domain>]`) the fake directory knows. */
export function fakeRegisterArgs(target: string): string {
  const ext = target.split('@')[0]!;
  return `${target} ${fakeUsername(ext)} ${fakePassword(ext)}`;
}

/** Registers `target` on the simulator through the fake directory. */
export function fakeRegister(sim: SwitchSimulator, target: string): Promise<string> {
  const [extension = '', domain] = target.split('@');
  return sim.register({ extension, domain, username: fakeUsername(extension), password: fakePassword(extension) });
}
