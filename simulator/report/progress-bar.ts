/**
 * The progress line of a run, on stderr: redrawn in place on a terminal, and written as a plain line at most every
 * 10 % (and at the end) otherwise, so CI logs stay short.
 */
import type { SimulationProgress } from '../run/options';

const WIDTH = 30;

/** The fraction done: producer commands, then (subscriber, event) pairs settled. */
export function progressFraction(progress: SimulationProgress): number {
  const total = progress.toProduce + progress.matched;
  if (total === 0) return 0;
  return Math.min(1, (progress.produced + progress.settled) / total);
}

/** One line of progress, e.g. `[#######-----]  58%  produced 58/100 · settled 210/360 · 640 deliveries · 37 faults · +00:45:00 simulated`. */
export function formatProgress(progress: SimulationProgress): string {
  const fraction = progressFraction(progress);
  const filled = Math.round(fraction * WIDTH);
  const seconds = progress.simulatedSecondsAhead;
  const clock = [Math.floor(seconds / 3600), Math.floor((seconds % 3600) / 60), seconds % 60].map((part) => String(part).padStart(2, '0')).join(':');
  return (
    `[${'#'.repeat(filled)}${'-'.repeat(WIDTH - filled)}] ${String(Math.floor(fraction * 100)).padStart(3)}%` +
    `  produced ${progress.produced}/${progress.toProduce} · settled ${progress.settled}/${progress.matched}` +
    ` · ${progress.deliveries} deliveries · ${progress.faults} faults · +${clock} simulated`
  );
}

/** A progress reporter writing to `write`; `interactive` redraws one line. */
export function createProgressBar(write: (text: string) => void, interactive: boolean): { update(progress: SimulationProgress): void; done(): void } {
  let lastDecile = -1;
  let last: SimulationProgress | undefined;
  return {
    update(progress) {
      last = progress;
      if (interactive) {
        write(`\r${formatProgress(progress)}`);
        return;
      }
      const decile = Math.floor(progressFraction(progress) * 10);
      if (decile > lastDecile) {
        lastDecile = decile;
        write(`${formatProgress(progress)}\n`);
      }
    },
    done() {
      if (interactive) write('\n');
      else if (last !== undefined && lastDecile < 10) write(`${formatProgress(last)}\n`);
    },
  };
}
