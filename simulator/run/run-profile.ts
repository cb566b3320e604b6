/**
 * Where a run's real time went (`simulate --profile`, `runSimulation`'s `onProfile`): the phases of the run, and within
 * its rounds the seeded scheduler's turns by the kind of step each began with (simulator/schedule/seeded-scheduler.ts,
 * `SchedulerTimings`) and the worker steps that ran beside them, with
 * the run's cold starts. A measurement of the machine the run ran on, so never part of the result or its `--json`.
 */
import type { SchedulerFigures, SchedulerTimings } from '../schedule/schedule-types';

/** The phases of a run, in order. */
export type RunPhase = 'assembly' | 'IAM engine' | 'DynamoDB Local start' | 'local flow' | 'rounds' | 'operator' | 'checks' | 'stop';

/** Where a run's real time went. */
export interface RunProfile {
  /** Each phase's real seconds, in the order they ran (a phase the run did not reach is absent). */
  readonly phases: readonly { readonly phase: RunPhase; readonly seconds: number }[];
  /**
   * Within the rounds: real seconds from each scheduler turn to the next, by the kind of the step the seed chose first
   * (see `SchedulerTimings`).
   */
  readonly steps: readonly { readonly kind: keyof SchedulerTimings; readonly count: number; readonly seconds: number }[];
  /** The worker steps of other environments that ran beside the turns' first steps. */
  readonly stepsBeside: number;
  /** Execution environments that took an invocation after their init, and how many of them were initialized ahead. */
  readonly coldStarts: number;
  readonly preInitialized: number;
}

/** Times the phases of a run as it goes. */
export class PhaseTimer {
  private readonly phases: { phase: RunPhase; seconds: number }[] = [];
  private phaseStartedAt = performance.now();

  /** `phase` ended now (it began when the previous one ended). */
  public ended(phase: RunPhase): void {
    const now = performance.now();
    this.phases.push({ phase, seconds: (now - this.phaseStartedAt) / 1000 });
    this.phaseStartedAt = now;
  }

  /** The profile, with the scheduler's timings and figures, and the cold starts. */
  public profile(
    scheduler: { readonly timings: SchedulerTimings; readonly figures: SchedulerFigures } | undefined,
    coldStarts: { readonly coldStarts: number; readonly preInitialized: number },
  ): RunProfile {
    const steps = scheduler === undefined ? [] : (Object.entries(scheduler.timings) as [keyof SchedulerTimings, { count: number; milliseconds: number }][]);
    return {
      phases: [...this.phases],
      steps: steps.filter(([, timing]) => timing.count > 0).map(([kind, timing]) => ({ kind, count: timing.count, seconds: timing.milliseconds / 1000 })),
      stepsBeside: scheduler === undefined ? 0 : scheduler.figures.steps - scheduler.figures.turns,
      ...coldStarts,
    };
  }
}

const STEP_NAMES: Readonly<Record<keyof SchedulerTimings, string>> = {
  starts: 'invocation starts (the worker runs to its first request)',
  forwards: 'requests forwarded (IAM, faults, DynamoDB Local)',
  replies: 'replies (the worker runs on to its next request)',
  timers: 'timers fired (SDK back-offs, sleeps)',
  timeOuts: 'invocations timed out',
  held: 'waits for an init or a crashed environment',
};

/** The profile as lines of text for a terminal. */
export function formatProfile(profile: RunProfile): string {
  const total = profile.phases.reduce((sum, { seconds }) => sum + seconds, 0);
  const lines = ['profile (real time of this machine):'];
  for (const { phase, seconds } of profile.phases) lines.push(`  ${phase.padEnd(24)} ${seconds.toFixed(2).padStart(7)} s`);
  lines.push(`  ${'total'.padEnd(24)} ${total.toFixed(2).padStart(7)} s`);
  if (profile.steps.length > 0) {
    lines.push(`  the rounds, by the step each turn of the scheduler began with (${profile.stepsBeside} worker steps ran beside them):`);
    for (const { kind, count, seconds } of profile.steps) {
      lines.push(`    ${STEP_NAMES[kind].padEnd(58)} ${String(count).padStart(6)} ${seconds.toFixed(2).padStart(7)} s  ${((seconds * 1000) / count).toFixed(2).padStart(6)} ms each`);
    }
  }
  lines.push(`  cold starts: ${profile.coldStarts} (${profile.preInitialized} initialized ahead of need)`);
  return `${lines.join('\n')}\n`;
}
