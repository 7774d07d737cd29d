const Sequencer = require('@jest/test-sequencer').default;

// The suite runs two files at once on a two-core machine. Files that speak and recognize audio in real
// time (the speech sidecar decodes and synthesizes while the call runs) take a core for a minute and
// more; files that hold the product to wall-clock rules (the two-second connect, the reset's equal
// timing, pacing races) must not share the machine with them. So the clock-bound files go first, the
// audio files last, and the rest in jest's own order between.
const CLOCK_BOUND = /(password-reset-delivery|campaign-run\.flows|campaign-run\.e2e|planned-shift-seat-choice|planned-shift-pacing|recordings-capture|agent-reachability\.e2e)\.test\.ts$/;
const AUDIO = /(ai-audio[^/]*|sim-audio-fork|speech-engine)\.test\.ts$/;

class ClockFirstAudioLast extends Sequencer {
  sort(tests) {
    const ordered = super.sort(tests);
    const rank = (t) => (CLOCK_BOUND.test(t.path) ? 0 : AUDIO.test(t.path) ? 2 : 1);
    return [...ordered].sort((a, b) => rank(a) - rank(b));
  }
}

module.exports = ClockFirstAudioLast;
