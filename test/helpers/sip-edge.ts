import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TestApp } from './harness';

export interface EdgeCall {
  method: string;
  url: string;
  authorization: string | undefined;
  body: unknown;
}

/** A SIP edge (SBC) API on loopback: records every request and answers `status` with `{}`. */
export interface FakeSipEdge {
  origin: string;
  readonly calls: EdgeCall[];
  status: number;
  /** Forget the calls and answer 200 again (between tests). */
  reset(): void;
  close(): Promise<void>;
}

export async function startFakeSipEdge(): Promise<FakeSipEdge> {
  const calls: EdgeCall[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      calls.push({ method: req.method!, url: req.url!, authorization: req.headers.authorization, body: JSON.parse(Buffer.concat(chunks).toString('utf8') || 'null') });
      res.writeHead(edge.status, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const edge: FakeSipEdge = {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    calls,
    status: 200,
    reset() {
      calls.length = 0;
      edge.status = 200;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
  return edge;
}

/** Runs `work` with the app's SBC_API_URL set to `url` (undefined: no edge configured), then restores it. */
export async function withEdgeUrl<T>(app: TestApp, url: string | undefined, work: () => Promise<T>): Promise<T> {
  const config = app.deps.config as { SBC_API_URL?: string };
  const saved = config.SBC_API_URL;
  config.SBC_API_URL = url;
  try {
    return await work();
  } finally {
    config.SBC_API_URL = saved;
  }
}
