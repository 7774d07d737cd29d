import { randomUUID } from 'node:crypto';
import { createSwitchCommands, EslCommandError, speakableText, type EslEvent } from '../../src/switch/esl';
import { startSwitchRig, waitFor, type SwitchRig } from '../helpers/dial-loop';

/**
 * The product's speech commands against the switch simulator over TCP: what a call says is text
 * the switch speaks with a loaded engine; an engine the switch has not loaded is refused before
 * anything is sent; nothing plays a file that was never produced.
 */

jest.setTimeout(30_000);

let rig: SwitchRig;
const events: EslEvent[] = [];

beforeAll(async () => {
  rig = await startSwitchRig({ talkMs: 60_000 });
  rig.esl.on('event', (ev) => events.push(ev));
});
afterAll(async () => {
  await rig.close();
});

/** A consumer leg the switch answered (a person: the number ends in 00-59). */
async function answeredConsumer(): Promise<string> {
  const commands = createSwitchCommands(rig.esl);
  const { uuid } = await commands.originate({ to: { type: 'pstn', number: `+1303555${String(Math.floor(Math.random() * 60)).padStart(4, '0')}` } });
  await waitFor(() => Promise.resolve(rig.sim.channel(uuid)?.state === 'answered' ? true : undefined), 5_000, 'the answer');
  return uuid;
}

describe('speech on the switch', () => {
  it('says the text with the engine and voice asked for, waits for its end, and the switch keeps what the leg heard', async () => {
    const uuid = await answeredConsumer();
    const commands = createSwitchCommands(rig.esl);
    const text = speakableText(`It's "Acme" calling,\nplease hold | $5 off.`);
    expect(text).toBe('It\u2019s \u201cAcme\u201d calling, please hold 5 off.'.replace('\u201c', '\u201d'));
    await commands.speak(uuid, { engine: 'flite', voice: 'kal', text }, { waitMs: 5_000 });
    // The end of the speech came before the command returned.
    expect(events.some((e) => e.uuid === uuid && e.name === 'CHANNEL_EXECUTE_COMPLETE' && e.headers.Application === 'speak')).toBe(true);
    expect(rig.sim.spoken(uuid)).toEqual([{ engine: 'flite', voice: 'kal', text, at: expect.any(String) }]);
    await commands.hangup(uuid);
  });

  it('refuses an engine the switch has not loaded, and the leg hears nothing', async () => {
    const uuid = await answeredConsumer();
    const commands = createSwitchCommands(rig.esl);
    const refused = await commands.speak(uuid, { engine: 'cepstral', voice: 'david', text: 'Hello there.' }).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(EslCommandError);
    expect((refused as EslCommandError).switchCause).toBe('TTS_ENGINE_NOT_LOADED');
    expect(events.filter((e) => e.uuid === uuid && e.headers.Application === 'speak')).toEqual([]);
    expect(rig.sim.spoken(uuid)).toEqual([]);
    await commands.hangup(uuid);
  });

  it('refuses a text that would break the command line before anything reaches the switch', async () => {
    const uuid = await answeredConsumer();
    const commands = createSwitchCommands(rig.esl);
    for (const text of ['two\nlines', "it's quoted", 'a | pipe', 'a ${var}', '   ', '']) {
      await expect(commands.speak(uuid, { engine: 'flite', voice: 'kal', text })).rejects.toThrow(TypeError);
    }
    await expect(commands.speak(uuid, { engine: 'flite kal', voice: 'kal', text: 'Hello.' })).rejects.toThrow(TypeError);
    expect(rig.sim.spoken(uuid)).toEqual([]);
    await commands.hangup(uuid);
  });

  it('a playback of a file nothing produced fails: the leg hears nothing and the switch says FILE NOT FOUND', async () => {
    const uuid = await answeredConsumer();
    const commands = createSwitchCommands(rig.esl);
    await commands.playback(uuid, `dialer-prompts/${randomUUID()}/message.wav`);
    const done = await waitFor(
      () => Promise.resolve(events.find((e) => e.uuid === uuid && e.name === 'CHANNEL_EXECUTE_COMPLETE' && e.headers.Application === 'playback')),
      5_000,
      'the playback to end',
    );
    expect(done.headers['Application-Response']).toBe('FILE NOT FOUND');
    await commands.hangup(uuid);
  });
});
