import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { pcmToWav } from '../../src/speech/audio';
import { SpeechProviderError } from '../../src/speech/hosted/egress-request';
import { DeepgramRecognizer, DeepgramSynthesizer, GoogleRecognizer, GoogleSynthesizer } from '../../src/speech/hosted/providers';

interface Seen {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

let server: http.Server;
let origin: string;
const seen: Seen[] = [];
let answer: (req: Seen) => { status: number; type: string; body: Buffer | string };

beforeAll(async () => {
  server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const s = { method: req.method!, url: req.url!, headers: req.headers, body: Buffer.concat(chunks) };
      seen.push(s);
      const a = answer(s);
      res.writeHead(a.status, { 'content-type': a.type });
      res.end(a.body);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(() => new Promise<void>((r) => server.close(() => r())));
beforeEach(() => {
  seen.length = 0;
});

const pcm = { sampleRate: 8000, samples: Int16Array.from({ length: 800 }, (_, i) => (i % 40) * 100) };

describe('Deepgram', () => {
  it('sends raw linear16 with the key in the header and reads words and offsets', async () => {
    answer = () => ({
      status: 200,
      type: 'application/json',
      body: JSON.stringify({ results: { channels: [{ alternatives: [{ transcript: 'Stop calling me', confidence: 0.93, words: [{ word: 'stop', start: 0.12, end: 0.4, confidence: 0.97 }] }] }] } }),
    });
    const r = await new DeepgramRecognizer({ apiKey: 'dg-key', baseUrl: origin, allowlist: [origin] }).recognize(pcm);
    expect(r).toEqual({ text: 'stop calling me', confidence: 0.93, words: [{ word: 'stop', startMs: 120, endMs: 400, confidence: 0.97 }] });
    const req = seen[0]!;
    expect(req.method).toBe('POST');
    const url = new URL(req.url, origin);
    expect(url.pathname).toBe('/v1/listen');
    expect(Object.fromEntries(url.searchParams)).toMatchObject({ encoding: 'linear16', sample_rate: '8000', language: 'en-US' });
    expect(url.search).not.toContain('dg-key');
    expect(req.headers.authorization).toBe('Token dg-key');
    expect(req.body.length).toBe(1600);
  });

  it('synthesizes linear16 at the asked rate', async () => {
    answer = () => ({ status: 200, type: 'audio/l16', body: Buffer.alloc(3200) });
    const s = await new DeepgramSynthesizer({ apiKey: 'dg-key', baseUrl: origin, allowlist: [origin] }).synthesize('Hello', { sampleRate: 16_000 });
    expect(s.pcm).toMatchObject({ sampleRate: 16_000 });
    expect(s.pcm.samples.length).toBe(1600);
    const url = new URL(seen[0]!.url, origin);
    expect(url.pathname).toBe('/v1/speak');
    expect(Object.fromEntries(url.searchParams)).toMatchObject({ encoding: 'linear16', sample_rate: '16000', container: 'none' });
    expect(JSON.parse(seen[0]!.body.toString())).toEqual({ text: 'Hello' });
  });

  it('turns a provider error status into a SpeechProviderError', async () => {
    answer = () => ({ status: 401, type: 'application/json', body: '{"err_code":"INVALID_AUTH"}' });
    await expect(new DeepgramRecognizer({ apiKey: 'bad', baseUrl: origin, allowlist: [origin] }).recognize(pcm)).rejects.toMatchObject({ reason: 'http_status', status: 401 });
  });
});

describe('Google', () => {
  it('recognizes with the phone-call model and word offsets', async () => {
    answer = () => ({
      status: 200,
      type: 'application/json',
      body: JSON.stringify({ results: [{ alternatives: [{ transcript: 'I can pay fifty dollars', confidence: 0.88, words: [{ word: 'I', startTime: '0.100s', endTime: '0.300s', confidence: 0.9 }] }] }] }),
    });
    const r = await new GoogleRecognizer({ apiKey: 'g-key', baseUrl: origin, allowlist: [origin] }).recognize(pcm);
    expect(r).toEqual({ text: 'i can pay fifty dollars', confidence: 0.88, words: [{ word: 'i', startMs: 100, endMs: 300, confidence: 0.9 }] });
    const req = seen[0]!;
    expect(new URL(req.url, origin).pathname).toBe('/v1/speech:recognize');
    expect(req.headers['x-goog-api-key']).toBe('g-key');
    const body = JSON.parse(req.body.toString()) as { config: Record<string, unknown>; audio: { content: string } };
    expect(body.config).toMatchObject({ encoding: 'LINEAR16', sampleRateHertz: 8000, languageCode: 'en-US', enableWordTimeOffsets: true, model: 'phone_call' });
    expect(Buffer.from(body.audio.content, 'base64').length).toBe(1600);
  });

  it('synthesizes Spanish and reads the WAV it answers', async () => {
    answer = () => ({ status: 200, type: 'application/json', body: JSON.stringify({ audioContent: pcmToWav({ sampleRate: 8000, samples: new Int16Array(400) }).toString('base64') }) });
    const s = await new GoogleSynthesizer({ apiKey: 'g-key', baseUrl: origin, allowlist: [origin] }).synthesize('Hola', { language: 'es', sampleRate: 8000 });
    expect(s.pcm.samples.length).toBe(400);
    const body = JSON.parse(seen[0]!.body.toString()) as { voice: { languageCode: string }; audioConfig: Record<string, unknown> };
    expect(body.voice.languageCode).toBe('es-US');
    expect(body.audioConfig).toEqual({ audioEncoding: 'LINEAR16', sampleRateHertz: 8000 });
  });
});

describe('egress check', () => {
  it('refuses a provider URL that is not allowlisted and fails the public-address rules, sending nothing', async () => {
    answer = () => ({ status: 200, type: 'application/json', body: '{}' });
    const err = await new DeepgramRecognizer({ apiKey: 'dg-key', baseUrl: origin, allowlist: [] }).recognize(pcm).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SpeechProviderError);
    expect(err).toMatchObject({ reason: 'egress_refused' });
    const resolvedPrivate = await new GoogleRecognizer({ apiKey: 'g-key', baseUrl: 'https://speech.example.com', allowlist: [], resolve: () => Promise.resolve(['10.0.0.7']) })
      .recognize(pcm)
      .catch((e: unknown) => e);
    expect(resolvedPrivate).toMatchObject({ reason: 'egress_refused' });
    expect(seen).toHaveLength(0);
  });
});
