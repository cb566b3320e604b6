/**
 * A request that DynamoDB has answered and that waits for its reply turn when its environment ends (the invocation
 * crashed at another request, or timed out) must get that turn: the proxy releases the request's hold on its items
 * (simulator/aws/transaction-conflicts.ts) only after it. Before, the turn never came: the hold stayed for the rest of
 * the run, and every later transaction on the item was refused with TransactionConflict, delivery after delivery,
 * until SQS dead-lettered valid events (issue 39: two events of one order refused five deliveries in a row).
 */
import { describe, expect, test } from 'vitest';
import type { QuietReport } from '../../../simulator/lambda/worker-protocol';
import { SeededScheduler } from '../../../simulator/schedule/seeded-scheduler';

/** A worker's report: `invocations` invocations, `sent` requests, the answers of `answered`. */
function quiet(sent: number, answered: number, invocations = 1): QuietReport {
  return { type: 'quiet', invocations, started: sent, scheduledStarted: sent, finished: answered, scheduledFinished: answered, timersFired: 0, timers: 0, nextTimerDue: -1 };
}

/** Resolves with 'given' if `turn` has resolved within two event-loop turns, else 'pending' (no real-time wait). */
function settledSoon(turn: Promise<void>): Promise<string> {
  return Promise.race([turn.then(() => 'given'), new Promise<string>((resolve) => setImmediate(() => setImmediate(() => resolve('pending'))))]);
}

describe('an environment that ends with a request waiting for its reply turn', () => {
  test('the request gets its reply turn, so the proxy releases its hold on its items', async () => {
    const scheduler = new SeededScheduler('disposed-holds');
    const environment = scheduler.environment('Consumer#1');
    environment.attach({ fireTimer: () => undefined, timeOut: () => undefined, stalled: () => undefined }, 60_000);
    environment.startingInvocation();
    environment.invocationBegan();
    const request = environment.arrive('TransactWriteItems', Buffer.from('{"TransactItems":[]}'));
    environment.quiet(quiet(1, 0));
    // the scheduler's forward step: the proxy admits it (it now holds its items) and dispatches it to DynamoDB
    await request.forwardTurn;
    request.dispatched();
    // the worker runs again (another request of the invocation, say) before the reply step could be taken ...
    environment.quiet(quiet(1, 0, 2));
    // ... DynamoDB answers: the proxy waits for the reply turn before it answers the worker and releases the hold
    const turn = request.replyTurn();
    // the invocation crashes at its other request: the environment is disposed
    environment.disposed();
    expect(await settledSoon(turn)).toBe('given');
  });
});
