/**
 * What the tests of real-time events between steps share: a seeded scheduler whose environments' quiet reports the
 * test can wait for, so that an outside server's close lands at a known point: after the worker reported quiet, before
 * the scheduler's next step (the scheduler is held meanwhile).
 */
import type { QuietReport } from '../../../simulator/lambda/worker-protocol';
import { SeededScheduler } from '../../../simulator/schedule/seeded-scheduler';

/** A scheduler of `seed` and the quiet reports its environments received, in order. */
export interface WatchedScheduler {
  readonly scheduler: SeededScheduler;
  readonly reports: readonly QuietReport[];
  /** Resolves with the first report from now on that `accept` takes. */
  nextReport(accept: (report: QuietReport) => boolean): Promise<QuietReport>;
}

/** See {@link WatchedScheduler}. */
export function watchedScheduler(seed: string): WatchedScheduler {
  const scheduler = new SeededScheduler(seed);
  const reports: QuietReport[] = [];
  const waiting: { accept: (report: QuietReport) => boolean; resolve: (report: QuietReport) => void }[] = [];
  const environment = scheduler.environment.bind(scheduler);
  scheduler.environment = (label) => {
    const created = environment(label);
    const quiet = created.quiet.bind(created);
    created.quiet = (report) => {
      reports.push(report);
      for (const waiter of [...waiting]) {
        if (!waiter.accept(report)) continue;
        waiting.splice(waiting.indexOf(waiter), 1);
        waiter.resolve(report);
      }
      quiet(report);
    };
    return created;
  };
  return {
    scheduler,
    reports,
    nextReport: (accept) => new Promise((resolve) => waiting.push({ accept, resolve })),
  };
}
