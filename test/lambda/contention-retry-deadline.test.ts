/**
 * Issue 40, review r1: the retry's deadline check was made before `beforeRetry` (the transactional and
 * ordered consumers wait there for the batch's commits under way, `ItemLocks.settled()`), and not after it: however long
 * that wait, the next attempt is started, even with no time left. A commit under way can be slow exactly when there is
 * contention (the SDK's own back-off on a throttled TransactWriteItems, up to its retry cap). The check is now made after it.
 */
import { expect, test } from 'vitest';
import { ContentionRetry } from '../../lambda/transaction/contention-retry';

test('no attempt starts once beforeRetry has used up the time the deadline check counted on', async () => {
  let elapsed = 0;
  const timeout = 3000;
  const lambdaContext = { getRemainingTimeInMillis: () => Math.max(0, timeout - elapsed) };
  const retry = new ContentionRetry({ random: () => 0, sleep: async () => undefined });
  const startedWithRemaining: number[] = [];
  const conflict = Object.assign(new Error('conflict'), { name: 'TransactionConflictException' });
  await expect(
    retry.run(
      async () => {
        startedWithRemaining.push(timeout - elapsed);
        elapsed += 50; // one round trip
        throw conflict;
      },
      {
        lambdaContext,
        // the batch's commits under way take 2.5 s (a throttled peer's commit in the SDK's back-off)
        beforeRetry: async () => void (elapsed += 2500),
      },
    ),
  ).rejects.toBe(conflict);
  // the second attempt was started with 450 ms left: less than the 1 s margin kept back for the batch and the response
  expect(startedWithRemaining.slice(1).every((remaining) => remaining >= 1000), `attempts started with ${startedWithRemaining.join(', ')} ms left`).toBe(true);
});
