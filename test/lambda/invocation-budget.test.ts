/**
 * The invocation's time shared by its batch (lambda/transaction/invocation-budget.ts): a record starts only while
 * `M + U × E` is left, a retry runs only while `M + E + U × E` is left (checked after its wait), and the retry's
 * jitter source is checked. Virtual time: each test moves `elapsed` itself.
 */
import { describe, expect, test } from 'vitest';
import { processBatch } from '../../lambda/consumer/batch';
import { ContentionRetry } from '../../lambda/transaction/contention-retry';
import { InvocationBudget } from '../../lambda/transaction/invocation-budget';
import { sqsRecord } from './helpers';

const conflict = (): Error => Object.assign(new Error('conflict'), { name: 'TransactionConflictException' });

function invocation(timeout: number): { context: { getRemainingTimeInMillis: () => number }; advance: (ms: number) => void; elapsed: () => number } {
  let elapsed = 0;
  return { context: { getRemainingTimeInMillis: () => Math.max(0, timeout - elapsed) }, advance: (ms) => void (elapsed += ms), elapsed: () => elapsed };
}

describe('InvocationBudget', () => {
  test('a record starts only while the margin plus one longest stretch per record not started is left', () => {
    const time = invocation(3000);
    const budget = new InvocationBudget(time.context, 4, 1000);
    const first = budget.startRecord();
    expect(first).toBeDefined();
    time.advance(400);
    first?.end(); // E = 400
    expect(budget.longestStretchMilliseconds).toBe(400);
    // 2600 left, 3 not started: 1000 + 3 × 400 = 2200 needed
    expect(budget.startRecord()).toBeDefined();
    time.advance(600);
    // 2000 left, 2 not started: 1000 + 2 × 400 = 1800 needed
    expect(budget.startRecord()).toBeDefined();
    time.advance(300);
    // 1700 left, 1 not started: 1400 needed
    expect(budget.startRecord()).toBeDefined();
    expect(budget.recordsNotStarted).toBe(0);
    const late = new InvocationBudget(time.context, 2, 1000);
    late.observeStretch(400);
    time.advance(400); // 1300 left: 1000 + 2 × 400 = 1800 needed
    expect(late.startRecord()).toBeUndefined();
    // the refused record no longer counts: 1000 + 1 × 400 = 1400 needed, 1300 left
    expect(late.recordsNotStarted).toBe(1);
    expect(late.startRecord()).toBeUndefined();
  });

  test('without a remaining time (no Lambda context) every record starts', () => {
    const budget = new InvocationBudget(undefined, 3, 1000);
    budget.observeStretch(10_000);
    expect([budget.startRecord(), budget.startRecord(), budget.startRecord()].every((clock) => clock !== undefined)).toBe(true);
    expect(budget.bounded).toBe(false);
  });
});

describe('ContentionRetry with the batch budget', () => {
  test('a retry stops while the records not started still have their time, one after another', async () => {
    const time = invocation(3000);
    const retry = new ContentionRetry({ random: () => 0.5, sleep: async (ms) => time.advance(ms) });
    const budget = retry.budget(time.context, 5);
    const clock = budget.startRecord();
    const startedWith: number[] = [];
    await expect(
      retry.run(
        async () => {
          startedWith.push(3000 - time.elapsed());
          time.advance(100);
          throw conflict();
        },
        { lambdaContext: time.context, ...(clock === undefined ? {} : { clock }) },
      ),
    ).rejects.toThrow('conflict');
    // 4 records not started at 100 ms each: every retry began with at least 1000 + 100 + 4 × 100 left
    expect(startedWith.length).toBeGreaterThan(1);
    expect(startedWith.slice(1).every((remaining) => remaining >= 1500)).toBe(true);
    // and the 4 records behind it all start
    for (let index = 0; index < 4; index++) {
      const next = budget.startRecord();
      expect(next, `record ${index} with ${3000 - time.elapsed()} ms left`).toBeDefined();
      time.advance(100);
      next?.end();
    }
    expect(3000 - time.elapsed()).toBeGreaterThanOrEqual(1000);
  });

  test('a batch larger than its concurrency: a contended record leaves the later records of its lane their time', async () => {
    const time = invocation(3000);
    const retry = new ContentionRetry({ random: () => 0.5, sleep: async (ms) => time.advance(ms) });
    const budget = retry.budget(time.context, 6);
    const records = Array.from({ length: 6 }, (_, index) => sqsRecord(`r${index}`, { messageId: `r${index}` }));
    let overran = false;
    const response = await processBatch(
      records,
      async (record, clock) => {
        if (record.messageId !== 'r0') {
          time.advance(150);
          overran ||= time.elapsed() > 2000;
          return 'processed';
        }
        return retry
          .run(
            async () => {
              time.advance(150);
              throw conflict();
            },
            { lambdaContext: time.context, ...(clock === undefined ? {} : { clock }) },
          )
          .then(() => 'processed' as const, () => 'failed' as const);
      },
      { budget, concurrency: 2, laneOf: () => 'one lane' },
    );
    expect(response.batchItemFailures).toEqual([{ itemIdentifier: 'r0' }]);
    expect(overran, `${time.elapsed()} ms used of 3000, 1000 kept back`).toBe(false);
  });

  test('a record the budget refuses is returned as a batch item failure, not attempted', async () => {
    const time = invocation(1200);
    const budget = new InvocationBudget(time.context, 3, 1000);
    const attempted: string[] = [];
    const notStarted: string[] = [];
    const response = await processBatch(
      [sqsRecord('a', { messageId: 'a' }), sqsRecord('b', { messageId: 'b' }), sqsRecord('c', { messageId: 'c' })],
      async (record) => {
        attempted.push(record.messageId);
        time.advance(150);
        return 'processed';
      },
      { budget, onNotStarted: (record) => notStarted.push(record.messageId) },
    );
    // a: 1200 ≥ 1000 + 3 × 0; b: 1050 < 1000 + 2 × 150
    expect(attempted).toEqual(['a']);
    expect(notStarted).toEqual(['b', 'c']);
    expect(response.batchItemFailures).toEqual([{ itemIdentifier: 'b' }, { itemIdentifier: 'c' }]);
  });

  test.each([Number.NaN, 1, -0.1, 2, Number.POSITIVE_INFINITY])('a jitter source returning %s is refused with a clear error, not waited on', async (value) => {
    const waits: number[] = [];
    const retry = new ContentionRetry({ random: () => value, sleep: async (ms) => void waits.push(ms) });
    await expect(
      retry.run(async () => {
        throw conflict();
      }),
    ).rejects.toThrow(/contentionRetry\.random must return a number from 0 \(inclusive\) to 1 \(exclusive\), but returned/);
    expect(waits).toEqual([]);
  });
});
