import { addNoiseFloor, concatPcm, levelDbfs, pcmFromBuffer, pcmToBuffer, pcmToWav, resample, silence, StreamResampler, wavToPcm } from '../../src/speech/audio';
import { collectionCallCorpus, numberWords, yearWords } from '../../src/speech/domain-corpus';
import { spokenNumbersToDigits } from '../../src/speech/numbers';
import { encodeFrame, FrameReader } from '../../src/speech/protocol';
import { RecognitionStream, type StreamBackend } from '../../src/speech/stream';
import type { Recognition, Utterance } from '../../src/speech/types';
import { Endpointer } from '../../src/speech/vad';

const tone = (hz: number, rate: number, ms: number, amplitude = 10_000) =>
  Int16Array.from({ length: Math.round((rate * ms) / 1000) }, (_, i) => Math.round(amplitude * Math.sin((2 * Math.PI * hz * i) / rate)));

describe('resampling', () => {
  it('keeps a telephone-band tone at its level and length from 22,050 Hz to 8 kHz', () => {
    const out = resample({ sampleRate: 22_050, samples: tone(1000, 22_050, 1000) }, 8000);
    expect(out.sampleRate).toBe(8000);
    expect(out.samples.length).toBe(8000);
    expect(levelDbfs(out.samples, 200, 7800)).toBeCloseTo(levelDbfs(tone(1000, 22_050, 1000)), 1);
  });

  it('removes what the lower rate cannot carry instead of folding it into the band', () => {
    const out = resample({ sampleRate: 22_050, samples: tone(6000, 22_050, 500) }, 8000);
    expect(levelDbfs(out.samples, 100, out.samples.length - 100)).toBeLessThan(-80);
  });

  it('gives the same samples frame by frame as the whole signal at once', () => {
    const input = tone(440, 8000, 1000);
    const whole = resample({ sampleRate: 8000, samples: input }, 16_000).samples;
    const r = new StreamResampler(8000, 16_000);
    const parts: Int16Array[] = [];
    for (let i = 0; i < input.length; i += 160) parts.push(r.push(input.subarray(i, i + 160)));
    parts.push(r.flush());
    expect(Array.from(concatPcm(parts))).toEqual(Array.from(whole));
  });

  it('returns the input unchanged at the same rate', () => {
    const pcm = { sampleRate: 8000, samples: tone(440, 8000, 10) };
    expect(resample(pcm, 8000)).toBe(pcm);
  });
});

describe('WAV', () => {
  it('round-trips PCM', () => {
    const samples = tone(300, 16_000, 50);
    const wav = pcmToWav({ sampleRate: 16_000, samples });
    expect(wav.toString('ascii', 0, 4)).toBe('RIFF');
    expect(wav.readUInt32LE(4)).toBe(wav.length - 8);
    const back = wavToPcm(wav);
    expect(back.sampleRate).toBe(16_000);
    expect(Array.from(back.samples)).toEqual(Array.from(samples));
  });

  it('skips chunks before the data and mixes stereo down', () => {
    const data = Buffer.alloc(8);
    data.writeInt16LE(100, 0);
    data.writeInt16LE(300, 2);
    data.writeInt16LE(-50, 4);
    data.writeInt16LE(-150, 6);
    const fmt = Buffer.alloc(24);
    fmt.write('fmt ', 0, 'ascii');
    fmt.writeUInt32LE(16, 4);
    fmt.writeUInt16LE(1, 8);
    fmt.writeUInt16LE(2, 10);
    fmt.writeUInt32LE(8000, 12);
    fmt.writeUInt32LE(32_000, 16);
    fmt.writeUInt16LE(4, 20);
    fmt.writeUInt16LE(16, 22);
    const list = Buffer.concat([Buffer.from('LIST'), Buffer.from([3, 0, 0, 0]), Buffer.from('abc'), Buffer.from([0])]);
    const dataChunk = Buffer.concat([Buffer.from('data'), Buffer.from([8, 0, 0, 0]), data]);
    const body = Buffer.concat([Buffer.from('WAVE'), fmt, list, dataChunk]);
    const wav = Buffer.concat([Buffer.from('RIFF'), Buffer.from([body.length & 0xff, (body.length >> 8) & 0xff, 0, 0]), body]);
    const pcm = wavToPcm(wav);
    expect(pcm.sampleRate).toBe(8000);
    expect(Array.from(pcm.samples)).toEqual([200, -100]);
  });

  it('refuses what is not 16-bit PCM', () => {
    const wav = pcmToWav({ sampleRate: 8000, samples: new Int16Array(4) });
    wav.writeUInt16LE(7, 20); // mu-law
    expect(() => wavToPcm(wav)).toThrow(/unsupported WAV format 7/);
    expect(() => wavToPcm(Buffer.from('not a wav file at all'))).toThrow(/RIFF/);
  });

  it('converts buffers and samples both ways', () => {
    const samples = Int16Array.from([0, 1, -1, 32_767, -32_768]);
    expect(Array.from(pcmFromBuffer(pcmToBuffer(samples), 8000).samples)).toEqual(Array.from(samples));
    expect(() => pcmFromBuffer(Buffer.alloc(3), 8000)).toThrow(/whole 16-bit/);
  });
});

describe('noise floor', () => {
  it('fills digital silence at the asked level, the same way every time', () => {
    const a = addNoiseFloor(silence(16_000, 500), 400);
    const b = addNoiseFloor(silence(16_000, 500), 400);
    expect(Array.from(a)).toEqual(Array.from(b));
    expect(levelDbfs(a)).toBeCloseTo(20 * Math.log10(400 / 32_768), 0);
    expect(levelDbfs(silence(16_000, 10))).toBe(-Infinity);
  });
});

describe('sidecar framing', () => {
  it('reassembles frames cut at any byte', () => {
    const frames = Buffer.concat([encodeFrame({ id: 1, ok: true }), encodeFrame({ id: 2, op: 'x' }, Buffer.from([1, 2, 3, 4]))]);
    for (let cut = 1; cut < frames.length; cut += 3) {
      const reader = new FrameReader();
      const got = [...reader.push(frames.subarray(0, cut)), ...reader.push(frames.subarray(cut))];
      expect(got.map((f) => f.header)).toEqual([
        { id: 1, ok: true },
        { id: 2, op: 'x' },
      ]);
      expect(Array.from(got[1]!.payload)).toEqual([1, 2, 3, 4]);
    }
  });

  it('refuses a header no sidecar writes', () => {
    const bad = Buffer.alloc(8);
    bad.writeUInt32BE(0xffffffff, 0);
    expect(() => new FrameReader().push(bad)).toThrow(/framing broken/);
  });
});

describe('end-of-utterance detection', () => {
  const rate = 8000;
  const speech = (ms: number) => tone(220, rate, ms, 6000);

  it('finds speech and its end after the configured silence, however the audio is chunked', () => {
    const audio = concatPcm([silence(rate, 500), speech(800), silence(rate, 200), speech(400), silence(rate, 1000)]);
    for (const chunk of [160, 77, audio.length]) {
      const ep = new Endpointer({ sampleRate: rate, eouSilenceMs: 500 });
      const events = [];
      for (let i = 0; i < audio.length; i += chunk) events.push(...ep.push(audio.subarray(i, i + chunk)));
      // The 200 ms pause is inside the utterance: one start, one end.
      expect(events).toEqual([
        { type: 'speech_start', atMs: 500 },
        { type: 'speech_end', atMs: 1900, detectedAtMs: 2400, cut: false },
      ]);
    }
  });

  it('ignores a click shorter than the minimum speech', () => {
    const ep = new Endpointer({ sampleRate: rate });
    expect(ep.push(concatPcm([silence(rate, 300), speech(40), silence(rate, 800)]))).toEqual([]);
  });

  it('cuts an utterance that never pauses', () => {
    const ep = new Endpointer({ sampleRate: rate, maxUtteranceMs: 1000 });
    const events = ep.push(concatPcm([silence(rate, 100), speech(1500)]));
    expect(events[1]).toMatchObject({ type: 'speech_end', cut: true });
  });

  it('takes steady line noise for silence and speech over it for speech', () => {
    const noisy = (ms: number) => addNoiseFloor(silence(rate, ms), 100);
    const ep = new Endpointer({ sampleRate: rate });
    const noise = noisy(2000);
    const talk = speech(600);
    const mixed = Int16Array.from(talk, (v, i) => v + noise[i]!);
    const events = ep.push(concatPcm([noise, mixed, noisy(900)]));
    expect(events.map((e) => e.type)).toEqual(['speech_start', 'speech_end']);
  });
});

describe('recognition stream', () => {
  const rate = 8000;
  const speech = (ms: number) => tone(220, rate, ms, 6000);

  function fakeBackend(texts: string[]): StreamBackend & { heard: number[] } {
    const heard: number[] = [];
    return {
      heard,
      recognize: (pcm): Promise<Recognition> => {
        heard.push(Math.round((pcm.samples.length / pcm.sampleRate) * 1000));
        const text = texts.shift() ?? '';
        return Promise.resolve({ text, confidence: 0.9, words: text ? [{ word: text, startMs: 300, endMs: 700, confidence: 0.9 }] : [] });
      },
    };
  }

  it('emits one utterance per turn, in order, with stream offsets', async () => {
    const backend = fakeBackend(['yes', 'stop calling me']);
    const stream = new RecognitionStream(backend, { sampleRate: rate, language: 'en', eouSilenceMs: 400 });
    const utterances: Utterance[] = [];
    const starts: number[] = [];
    stream.on('utterance', (u) => utterances.push(u));
    stream.on('speech_start', (e) => starts.push(e.atMs));
    const audio = concatPcm([silence(rate, 1000), speech(500), silence(rate, 1000), speech(700), silence(rate, 600)]);
    for (let i = 0; i < audio.length; i += 160) stream.feed(audio.subarray(i, i + 160));
    await stream.close();
    expect(starts).toEqual([1000, 2500]);
    expect(utterances.map((u) => [u.text, u.startMs, u.endMs, u.detectedAtMs])).toEqual([
      ['yes', 1000, 1500, 1900],
      ['stop calling me', 2500, 3200, 3600],
    ]);
    // The recognizer got the speech with 300 ms of pre-roll and the silence until the frame before the end was seen.
    expect(backend.heard).toEqual([1180, 1380]);
    // Word offsets are the stream's: the audio handed over began 300 ms before the speech.
    expect(utterances[0]!.words[0]).toMatchObject({ startMs: 1000, endMs: 1400 });
  });

  it('signals barge-in only while the agent speaks, once per utterance', () => {
    const stream = new RecognitionStream(fakeBackend([]), { sampleRate: rate, language: 'en', bargeInMs: 200 });
    const barges: number[] = [];
    stream.on('barge_in', (e) => barges.push(e.atMs));
    const feed = (pcm: Int16Array) => {
      for (let i = 0; i < pcm.length; i += 160) stream.feed(pcm.subarray(i, i + 160));
    };
    feed(concatPcm([silence(rate, 300), speech(600), silence(rate, 700)]));
    expect(barges).toEqual([]);
    stream.setAgentSpeaking(true);
    feed(concatPcm([speech(600), silence(rate, 700)]));
    expect(barges).toEqual([1800]);
    stream.cancel();
  });

  it('reports a recognizer failure as an error event and keeps the order of later utterances', async () => {
    let calls = 0;
    const stream = new RecognitionStream(
      {
        recognize: () => {
          calls++;
          if (calls === 1) return Promise.reject(new Error('engine down'));
          return Promise.resolve({ text: 'no', confidence: 1, words: [] });
        },
      },
      { sampleRate: rate, language: 'en', eouSilenceMs: 300 },
    );
    const seen: string[] = [];
    stream.on('error', (e) => seen.push(`error: ${e.message}`));
    stream.on('utterance', (u) => seen.push(u.text));
    stream.feed(concatPcm([silence(rate, 200), speech(300), silence(rate, 500), speech(300), silence(rate, 500)]));
    await stream.close();
    expect(seen).toEqual(['error: engine down', 'no']);
  });
});

describe('spoken numbers', () => {
  it.each([
    ['i can pay fifty dollars on friday', 'i can pay 50 dollars on friday'],
    ['i can pay one hundred dollars a month', 'i can pay 100 dollars a month'],
    ['two hundred fifty', '250'],
    ['a hundred dollars', '100 dollars'],
    ['one hundred and five dollars', '105 dollars'],
    ['two thousand five hundred', '2500'],
    ['my zip code is nine zero two one zero', 'my zip code is 90210'],
    ['four five six seven', '4567'],
    ['march fifteenth nineteen eighty', 'march 15 1980'],
    ['nineteen oh five', '1905'],
    ['twenty first', '21'],
    ['no one by that name', 'no one by that name'],
    ['this one', 'this one'],
    ['one dollar', '1 dollar'],
  ])('%s → %s', (spoken, digits) => {
    expect(spokenNumbersToDigits(spoken)).toBe(digits);
  });
});

describe('collection-call corpus', () => {
  it('spells numbers and years as they are said', () => {
    expect(numberWords(0)).toBe('zero');
    expect(numberWords(45)).toBe('forty five');
    expect(numberWords(1250)).toBe('one thousand two hundred fifty');
    expect(yearWords(1980)).toBe('nineteen eighty');
    expect(yearWords(1905)).toBe('nineteen oh five');
    expect(yearWords(2003)).toBe('two thousand three');
  });

  it('holds the dialog acts the rule engine reads, and no digits or Spanish', () => {
    const lines = collectionCallCorpus().split('\n');
    for (const s of ['stop calling me', 'i want to talk to a person', 'you have the wrong', 'i can pay fifty dollars', 'march fifteenth']) {
      expect(lines).toContain(s);
    }
    expect(lines.some((l) => /\d/.test(l))).toBe(false);
    expect(lines).not.toContain('no me llame');
    expect(new Set(lines).size).toBe(lines.length);
  });
});
