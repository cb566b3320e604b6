/**
 * DynamoDB faults at seeded positions, for the proof tests: lost responses (DynamoDB applied the request, the client
 * never hears of it) and throttling, through the fault proxy in front of DynamoDB Local. Not a test file.
 */
import type { FaultProxy } from '../fault-proxy';

/** A throttling error DynamoDB answers with. */
export type ThrottleError = 'ThrottlingException' | 'ProvisionedThroughputExceededException';

/** The faults of one DynamoDB operation. */
export interface OperationFaults {
  /** The operation, e.g. `PutItem` or `TransactWriteItems`. */
  readonly operation: string;
  /** Each fault falls on its own request among the first `within` of the operation, counted from the injection. */
  readonly within: number;
  /** Requests whose response is lost after DynamoDB applied them. @default 0 */
  readonly lostResponses?: number;
  /** Requests answered with a throttling error instead of being forwarded. @default 0 */
  readonly throttles?: number;
  /** The throttling errors, taking turns. @default ['ThrottlingException'] */
  readonly throttleErrors?: readonly ThrottleError[];
  /** Each throttle hits 1 to `throttleRun` (seeded) consecutive requests, so the SDK's retry may be throttled too. @default 1 */
  readonly throttleRun?: number;
}

/** Adds the `faults` to `proxy` at positions drawn from `random`; reports how many have fired so far. */
export function injectSeededFaults(proxy: FaultProxy, random: () => number, faults: readonly OperationFaults[]): { fired(): number } {
  const counters: Array<() => number> = [];
  for (const spec of faults) {
    const target = `DynamoDB_20120810.${spec.operation}`;
    const used = new Set<number>();
    const position = (length: number): number => {
      let nth = 1 + Math.floor(random() * spec.within);
      while (Array.from({ length }, (_unused, offset) => nth + offset).some((taken) => used.has(taken))) nth += 1;
      for (let offset = 0; offset < length; offset += 1) used.add(nth + offset);
      return nth;
    };
    for (let index = 0; index < (spec.lostResponses ?? 0); index += 1) counters.push(proxy.inject({ target, nth: position(1), fault: { kind: 'drop-response' } }));
    const errors = spec.throttleErrors ?? ['ThrottlingException'];
    const run = spec.throttleRun ?? 1;
    for (let index = 0; index < (spec.throttles ?? 0); index += 1) {
      const times = run > 1 ? 1 + Math.floor(random() * run) : 1;
      const errorType = errors[index % errors.length] as ThrottleError;
      counters.push(proxy.inject({ target, nth: position(times), times, fault: { kind: 'throttle', errorType } }));
    }
  }
  return { fired: () => counters.reduce((total, counter) => total + counter(), 0) };
}
