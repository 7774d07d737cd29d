import { randomUUID } from 'node:crypto';
import { loadConfig } from '../../src/config';
import { audioForkToken, audioForkUrl, verifyAudioForkPath } from '../../src/modules/ai-calls/audio-fork';
import { buildAudioForkStart } from '../../src/switch/esl/commands';

const SECRET = 'unit-secret-0123456789abcdef';
const call = () => ({ tenantId: randomUUID(), callAttemptId: randomUUID(), callUuid: randomUUID() });

describe('audio fork URLs', () => {
  it('name the call and its token under any path prefix; another secret, call or tenant does not verify', () => {
    const ref = call();
    const url = new URL(audioForkUrl('wss://gw.example.com/a/b/', SECRET, ref));
    expect(url.pathname).toBe(`/a/b/${ref.tenantId}/${ref.callAttemptId}/${ref.callUuid}/${audioForkToken(SECRET, ref)}`);
    expect(verifyAudioForkPath(url.pathname, SECRET)).toEqual(ref);
    expect(verifyAudioForkPath(url.pathname, `${SECRET}x`)).toBeNull();
    const other = { ...ref, tenantId: randomUUID() };
    expect(verifyAudioForkPath(`/${other.tenantId}/${ref.callAttemptId}/${ref.callUuid}/${audioForkToken(SECRET, ref)}`, SECRET)).toBeNull();
    expect(verifyAudioForkPath(`/${ref.tenantId}/${ref.callAttemptId}/${ref.callUuid}`, SECRET)).toBeNull();
    expect(verifyAudioForkPath(`/${ref.tenantId}/${ref.callAttemptId}/${ref.callUuid}/${audioForkToken(SECRET, ref).slice(1)}`, SECRET)).toBeNull();
    expect(verifyAudioForkPath(`/not-a-uuid/${ref.callAttemptId}/${ref.callUuid}/${audioForkToken(SECRET, ref)}`, SECRET)).toBeNull();
  });

  it('uuid_audio_fork start takes one-line arguments only', () => {
    const uuid = randomUUID();
    expect(buildAudioForkStart(uuid, { url: 'ws://127.0.0.1:9/x', sampleRate: '8k', metadata: '{"a":1}' })).toBe(`uuid_audio_fork ${uuid} start ws://127.0.0.1:9/x mono 8k {"a":1}`);
    expect(() => buildAudioForkStart(uuid, { url: 'http://127.0.0.1/x', sampleRate: '8k', metadata: '{}' })).toThrow(TypeError);
    expect(() => buildAudioForkStart(uuid, { url: 'ws://h/x y', sampleRate: '8k', metadata: '{}' })).toThrow(TypeError);
    expect(() => buildAudioForkStart(uuid, { url: 'ws://h/x', sampleRate: '8k', metadata: '{"a": 1}' })).toThrow(TypeError);
    expect(() => buildAudioForkStart('bad uuid', { url: 'ws://h/x', sampleRate: '8k', metadata: '{}' })).toThrow(TypeError);
  });

  it('the gateway settings need the signing secret', () => {
    const base = { DATABASE_URL: 'postgresql://x@127.0.0.1/x' };
    expect(() => loadConfig({ ...base, AI_AUDIO_WS_URL: 'ws://gw:8090/ai-audio' })).toThrow(/AI_AUDIO_SECRET/);
    expect(() => loadConfig({ ...base, AI_AUDIO_WS_PORT: '8090' })).toThrow(/AI_AUDIO_SECRET/);
    expect(() => loadConfig({ ...base, AI_AUDIO_WS_URL: 'http://gw', AI_AUDIO_SECRET: SECRET })).toThrow(/AI_AUDIO_WS_URL/);
    expect(loadConfig({ ...base, AI_AUDIO_WS_URL: 'wss://gw/ai', AI_AUDIO_WS_PORT: '8090', AI_AUDIO_SECRET: SECRET })).toMatchObject({ AI_AUDIO_WS_PORT: 8090, AI_ASR_MIN_CONFIDENCE: 0.3, AI_ASR_REPROMPTS: 2 });
  });
});
