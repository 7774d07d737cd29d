import { AbandonmentController, linesToDial, type PacingMode } from '../src/modules/dialer/pacing';
import { argNumber } from './support';
import { mulberry32 } from '../test/helpers/seeded-random';

/**
 * `npm run bench:pacing`: a discrete-time simulation (1 s steps) of one campaign with many agents
 * and an unlimited lead list, dialed by the product's pacing module, predictive against progressive.
 * Stated distributions (seeded, so runs repeat):
 * - outcome of a dialed call: 25 % person, 10 % machine, 45 % no answer, 20 % busy or failed;
 * - a person or machine answers after 4-20 s of ringing (uniform); no answer ends at 25 s; busy or
 *   failed ends after 1-3 s;
 * - a person needs an agent within 2 s of answering, else the call is abandoned (it plays the
 *   seller identification message);
 * - talk time exponential with mean 120 s (at least 15 s), then 15 s of wrap-up; machines are
 *   detected and dropped without an agent.
 * Flags: --agents=50 --hours=4 --threshold=0.03 --max-ratio=4 --seed=7
 */
type Outcome = 'human' | 'machine' | 'no_answer' | 'busy';

interface Call {
  outcome: Outcome;
  resolvesAt: number;
}

function simulate(mode: PacingMode, opts: { agents: number; seconds: number; threshold: number; maxRatio: number; seed: number }) {
  const random = mulberry32(opts.seed);
  const uniform = (lo: number, hi: number) => lo + (hi - lo) * random();
  const draw = (): Outcome => {
    const r = random();
    return r < 0.25 ? 'human' : r < 0.35 ? 'machine' : r < 0.8 ? 'no_answer' : 'busy';
  };
  const busyUntil = new Array<number>(opts.agents).fill(0);
  let ringing: Call[] = [];
  let waiting: number[] = []; // answered persons waiting for an agent: their deadline
  const controller = new AbandonmentController({ minRatio: 1, maxRatio: opts.maxRatio, threshold: opts.threshold, initialRatio: 1.5 });
  let dialed = 0;
  let humans = 0;
  let connected = 0;
  let abandoned = 0;
  let busySeconds = 0;
  const freeAgent = (t: number) => busyUntil.findIndex((until) => until <= t);
  const assign = (agent: number, t: number) => {
    const talk = Math.max(15, -Math.log(1 - random()) * 120);
    busyUntil[agent] = t + talk + 15;
    busySeconds += talk + 15;
  };

  for (let t = 0; t < opts.seconds; t += 1) {
    let tickConnected = 0;
    let tickAbandoned = 0;
    const stillRinging: Call[] = [];
    for (const call of ringing) {
      if (call.resolvesAt > t) {
        stillRinging.push(call);
      } else if (call.outcome === 'human') {
        humans += 1;
        waiting.push(t + 2);
      }
    }
    ringing = stillRinging;
    const stillWaiting: number[] = [];
    for (const deadline of waiting) {
      const agent = freeAgent(t);
      if (agent >= 0) {
        assign(agent, t);
        connected += 1;
        tickConnected += 1;
      } else if (deadline <= t) {
        abandoned += 1;
        tickAbandoned += 1;
      } else {
        stillWaiting.push(deadline);
      }
    }
    waiting = stillWaiting;
    controller.record(tickConnected, tickAbandoned);
    const ratio = mode === 'predictive' ? controller.adjust() : 1;
    const available = busyUntil.filter((until) => until <= t).length;
    const lines = linesToDial({ mode, availableAgents: available, ringing: ringing.length + waiting.length, ratio, overDialAllowed: true, capacity: Infinity });
    for (let i = 0; i < lines; i += 1) {
      const outcome = draw();
      const resolvesAt = t + (outcome === 'no_answer' ? 25 : outcome === 'busy' ? uniform(1, 3) : uniform(4, 20));
      ringing.push({ outcome, resolvesAt });
      dialed += 1;
    }
  }
  const agentSeconds = opts.agents * opts.seconds;
  return {
    mode,
    dialed,
    persons_answered: humans,
    connected,
    abandoned,
    abandonment_rate: humans === 0 ? 0 : +(abandoned / humans).toFixed(4),
    agent_occupancy: +(Math.min(busySeconds, agentSeconds) / agentSeconds).toFixed(4),
    connects_per_agent_hour: +(connected / opts.agents / (opts.seconds / 3600)).toFixed(2),
    final_ratio: mode === 'predictive' ? +controller.ratio.toFixed(3) : 1,
  };
}

function main(): void {
  const opts = {
    agents: argNumber('agents', 50),
    seconds: argNumber('hours', 4) * 3600,
    threshold: argNumber('threshold', 0.03),
    maxRatio: argNumber('max-ratio', 4),
    seed: argNumber('seed', 7),
  };
  const results = [simulate('progressive', opts), simulate('predictive', opts)];
  process.stdout.write(`${JSON.stringify({ ...opts, results }, null, 2)}\n`);
}

main();
