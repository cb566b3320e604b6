/**
 * A SimulationResult for report tests (the text summary, `--json`): a quiet run of seed 1, two commands, two events,
 * no fault, no violation, IAM off; a test gives what it is about (`subscribers`, `violations`, `causes`, ...) as
 * `fields`. Not a test file.
 */
import { iamNotEvaluated } from '../../simulator/check/iam-not-evaluated';
import type { SimulationResult } from '../../simulator/run/simulation';

/** The quiet run with `fields` over it. */
export function reportedRun(fields: Partial<SimulationResult>): SimulationResult {
  return {
    assemblyDirectory: '/tmp/cdk.out',
    synthAnnotations: [],
    seed: '1',
    startTime: '2026-01-02T00:00:00.000Z',
    startTimeMs: Date.parse('2026-01-02T00:00:00Z'),
    concurrency: 4,
    producer: { total: 2, succeeded: 2, retried: 0, failed: [] },
    relay: { streamRecords: 2, committedEvents: 2, offloadedEvents: 0, failedAttempts: 0, deadLettered: 0, deadLetterMessages: 0, lost: 0 },
    sns: { failedAttempts: 0, deadLettered: 0, undeliverable: 0 },
    transactionConflicts: { refused: 0, byOperation: {} },
    sqsSends: [],
    subscribers: [],
    deadLetters: new Map(),
    violations: [],
    causes: [],
    effectsNotCounted: [],
    notSimulated: [],
    rounds: 3,
    simulatedSeconds: 0,
    realSeconds: 1,
    totalFaults: 0,
    iam: iamNotEvaluated('off'),
    untakenEvents: [],
    notExercised: [],
    failurePathsNotMet: [],
    replayable: true,
    realTimeEvents: { count: 0, first: [] },
    ...fields,
  } as SimulationResult;
}
