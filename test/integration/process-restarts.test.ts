import path from 'node:path';
import { ROOT_DIR } from '../../src/config';
import { createLogger } from '../../src/lib/logger';
import { ProcessGroup } from '../../src/platform/supervisor';
import { waitFor } from '../helpers/dial-loop';

jest.setTimeout(60_000);

/**
 * The supervisor's policy for a child that dies (src/platform/supervisor.ts): restarted after a
 * doubling back-off, and five exits within a minute end the start, through the caller's shutdown.
 */
describe('a child process that keeps exiting', () => {
  it('is restarted after 1, 2, 4 and 8 s, then the fifth exit asks the start to stop', async () => {
    const logger = createLogger('silent');
    const errors: Array<Record<string, unknown>> = [];
    jest.spyOn(logger, 'error').mockImplementation((obj: unknown) => void errors.push(obj as Record<string, unknown>));
    let fatal: string | null = null;
    const group = new ProcessGroup(logger, (why) => (fatal = why));
    const step = group.shutdownStep('worker', 'workers');
    const ready = await group.start({ role: 'worker', exec: path.join(ROOT_DIR, 'test/fixtures/processes/exits-after-ready.js'), env: () => ({}) }, 1);
    expect(ready).toEqual([expect.objectContaining({ name: 'worker-1', pid: expect.any(Number) })]);

    const why = await waitFor(() => Promise.resolve(fatal ?? undefined), 40_000, 'the start to be stopped');
    expect(why).toMatch(/^worker-1 exited 5 times within 60000 ms$/);
    expect(errors.filter((e) => e.restart_in_ms !== undefined).map((e) => [e.process, e.code, e.restart_in_ms])).toEqual([
      ['worker-1', 3, 1000],
      ['worker-1', 3, 2000],
      ['worker-1', 3, 4000],
      ['worker-1', 3, 8000],
    ]);
    step.begin!();
    await step.run();
  });
});
