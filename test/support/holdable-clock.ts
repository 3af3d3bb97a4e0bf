/**
 * A clock that follows real time until a test holds it: a ManualClock moved on by the real
 * time elapsed, every few milliseconds, except while held. A simulated component on it (the
 * RunPod stand-in, say) behaves as on the real clock, but a test can stop its time at a
 * state it wants to look at (a container still running) for as long as its checks take on a
 * busy machine, then let it go on; no check then depends on being quicker than a sleep.
 */
import { ManualClock } from '../../src/lib/clock.ts';

export interface HoldableClock {
  clock: ManualClock;
  /** Stops time where it is: no timer of the clock fires until `release`. */
  hold(): void;
  /** Time goes on from where it was held (the real time spent held is skipped). */
  release(): void;
  /** Stops following real time (for the test's cleanup). */
  stop(): void;
}

export function holdableClock(): HoldableClock {
  const clock = new ManualClock(Date.now());
  let held = false;
  let last = performance.now();
  const follow = setInterval(() => {
    const t = performance.now();
    if (!held) clock.advance(t - last);
    last = t;
  }, 5);
  follow.unref();
  return {
    clock,
    hold: () => {
      held = true;
    },
    release: () => {
      held = false;
    },
    stop: () => clearInterval(follow),
  };
}
