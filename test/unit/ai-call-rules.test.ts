import { aiGateRefusal, billableMinutes, billableSeconds, toMicros, utcMonth } from '../../src/modules/ai-calls/ai-call.rules';
import { openSpeech, sealSpeech } from '../../src/modules/ai-calls/ai-speech.seal';
import { toCallSignal } from '../../src/modules/dialer/call-event.relay';
import { CryptoBox } from '../../src/lib/crypto-box';
import type { EslEvent } from '../../src/switch/esl';

describe('ai-call rules', () => {
  const open = { voiceAiEnabled: true, pausedAt: null, agentStatus: 'live', monthCostUsd: '0', budgetUsd: null };

  it('refuses in gate order: add-on, kill switch, agent, budget', () => {
    expect(aiGateRefusal(open)).toBeNull();
    expect(aiGateRefusal({ ...open, voiceAiEnabled: false, pausedAt: new Date() })).toBe('voice_ai_disabled');
    expect(aiGateRefusal({ ...open, pausedAt: new Date(), agentStatus: 'paused' })).toBe('ai_paused');
    expect(aiGateRefusal({ ...open, agentStatus: null })).toBe('ai_agent_not_live');
    expect(aiGateRefusal({ ...open, agentStatus: 'draft' })).toBe('ai_agent_not_live');
    expect(aiGateRefusal({ ...open, monthCostUsd: '9.9999', budgetUsd: '10.00' })).toBeNull();
    expect(aiGateRefusal({ ...open, monthCostUsd: '10.0000', budgetUsd: '10.00' })).toBe('ai_budget_exhausted');
    expect(aiGateRefusal({ ...open, monthCostUsd: '0', budgetUsd: '0.00' })).toBe('ai_budget_exhausted');
  });

  it('reads decimal money as integer micro-dollars without floats', () => {
    expect(toMicros('0.1')).toBe(100_000n);
    expect(toMicros('0.2') + toMicros('0.1')).toBe(toMicros('0.3'));
    expect(toMicros('12.3456')).toBe(12_345_600n);
    expect(toMicros('7')).toBe(7_000_000n);
    expect(() => toMicros('abc')).toThrow();
  });

  it('bills answer to end in whole seconds capped at the ceiling, per started minute', () => {
    const a = new Date('2026-01-01T00:00:00.000Z');
    expect(billableSeconds(a, new Date('2026-01-01T00:00:00.000Z'), 900)).toBe(0);
    expect(billableSeconds(a, new Date('2026-01-01T00:00:00.001Z'), 900)).toBe(1);
    expect(billableSeconds(a, new Date('2026-01-01T00:01:01.000Z'), 900)).toBe(61);
    expect(billableSeconds(a, new Date('2026-01-01T01:00:00.000Z'), 900)).toBe(900);
    expect(billableSeconds(a, new Date('2025-12-31T23:59:00.000Z'), 900)).toBe(0);
    expect([0, 1, 59, 60, 61, 120, 121].map(billableMinutes)).toEqual([0, 1, 1, 1, 2, 2, 3]);
  });

  it('spans the UTC month, December included', () => {
    expect(utcMonth(new Date('2026-12-31T23:59:59.999Z'))).toEqual({ from: new Date('2026-12-01T00:00:00Z'), to: new Date('2027-01-01T00:00:00Z') });
  });
});

describe('dd::speech relay', () => {
  const event = (headers: Record<string, string>): EslEvent =>
    ({ name: 'CUSTOM', subclass: 'dd::speech', uuid: 'u1', headers: { 'Event-Sequence': '7', 'Event-Date-Timestamp': '1767225600000000', ...headers }, variables: {} }) as unknown as EslEvent;

  const box = new CryptoBox('relay-test-key');
  const seal = (text: string) => sealSpeech(box, text);

  it('becomes a speech signal carrying the words sealed, cut at 2,000 characters', () => {
    const signal = toCallSignal(event({ 'Speech-Text': 'born 01011980' }), seal) as { kind: string; seq: string; text: string; at: string };
    expect(signal).toEqual({ kind: 'speech', seq: '7', text: expect.any(String), at: '2026-01-01T00:00:00.000Z' });
    expect(signal.text).not.toContain('01011980');
    expect(openSpeech(box, signal.text)).toBe('born 01011980');
    expect(openSpeech(box, (toCallSignal(event({ 'Speech-Text': 'a'.repeat(2500) }), seal) as { text: string }).text)).toHaveLength(2000);
  });

  it('opens speech signalled before sealing as it is, and refuses a sealed value of another key', () => {
    expect(openSpeech(box, 'born 01011980')).toBe('born 01011980');
    expect(openSpeech(box, 'v1 is my answer')).toBe('v1 is my answer');
    expect(openSpeech(box, 'v1.2.3.4')).toBe('v1.2.3.4');
    expect(() => openSpeech(box, sealSpeech(new CryptoBox('another-deployment'), 'born 01011980'))).toThrow();
  });
});
