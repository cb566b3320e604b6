/**
 * The verdict of a verify run, from its result alone (the report and the CLI's exit code use it): `VIOLATED` when a
 * check failed or a producer command failed every attempt (simulate's `producer-failed`: the events it was meant to
 * commit are missing, and no delivery check sees that); else `NOT PROVEN` when something verify could not see might
 * have failed: no event of the run committed, no subscriber took any, a dead-letter queue it could not read whole, a
 * relay dead-letter queue that rose, a subscriber whose applying it cannot see ({@link VerifyResult.unproven}); else `OK`.
 * Only `OK` exits 0.
 */
import { checkProducerFailures } from '../check/producer-failures';
import type { Violation } from '../check/invariants';
import type { ProducerFigures } from '../observation/run-facts';
import { PRODUCER_ATTEMPTS } from '../run/producer-driver';

/** What the verdict is made from: a verify run's result (./verify-run.ts `VerifyResult`), before or after its cleanup. */
export interface VerdictInput {
  readonly runId: string;
  readonly producer: ProducerFigures;
  readonly committedEvents: number;
  readonly subscribers: readonly { readonly events: number }[];
  readonly violations: readonly Violation[];
  /** @default none */
  readonly unproven?: readonly string[];
}

/** What a verify run proved. */
export interface VerifyVerdict {
  readonly status: 'OK' | 'VIOLATED' | 'NOT PROVEN';
  /** The checks' violations, with the producer's failed commands. */
  readonly violations: readonly Violation[];
  /** Why the run cannot say OK though no check failed: one sentence each. */
  readonly unproven: readonly string[];
}

/** The verdict of `result` (see the module comment). */
export function verifyVerdict<Result extends VerdictInput>(result: Result): VerifyVerdict {
  const producerFailed = result.violations.some((violation) => violation.kind === 'producer-failed') ? [] : checkProducerFailures(result.producer, PRODUCER_ATTEMPTS);
  const violations = [...producerFailed, ...result.violations];
  const unproven = [...(result.unproven ?? [])];
  if (result.committedEvents === 0) {
    unproven.unshift(
      `no event of the run was committed (${result.producer.succeeded} of ${result.producer.total} command(s) succeeded): verify found no outbox event carrying the run id ${result.runId}, so it checked nothing; does the producer commit events whose id or data carry the command's ids?`,
    );
  } else if (result.subscribers.length > 0 && result.subscribers.every((subscriber) => subscriber.events === 0)) {
    unproven.unshift(`no subscriber's filter took any of the run's ${result.committedEvents} event(s): nothing was delivered, so nothing was checked`);
  }
  return { status: violations.length > 0 ? 'VIOLATED' : unproven.length > 0 ? 'NOT PROVEN' : 'OK', violations, unproven };
}
