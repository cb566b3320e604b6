/**
 * Review r8 (issue 40's `recordScope`): what the batch does with a record scope that breaks its contract in ways the
 * batch does not check. Each test is a finding; each failed on s8-rv8 (27b8873) when committed. Pure: processBatch
 * touches no AWS service; the invocation's time is a virtual clock read through a Lambda-like context.
 */
import { describe, expect, test } from 'vitest';
import { processBatch, type RecordOutcome, type RecordScope } from '../../lambda/consumer/batch';
import { InvocationBudget } from '../../lambda/transaction/invocation-budget';
import { sqsRecord } from './helpers';

describe('review r8: recordScope', () => {
  test('R8-2: a scope that calls process twice does not run the record twice (nor count two starts in the budget)', async () => {
    // GIVEN a scope that calls `process` twice (a retrying wrapper, or a nested scope that runs its body again)
    const runs: string[] = [];
    const unexpected: string[] = [];
    const twiceScope: RecordScope = async (_record, process) => {
      await process();
      return process();
    };
    const records = ['a', 'b'].map((id) => sqsRecord(id, { messageId: id }));
    const budget = new InvocationBudget({ getRemainingTimeInMillis: () => 60_000 }, records.length, 1000);

    // WHEN the batch runs
    await processBatch(
      records,
      async (record): Promise<RecordOutcome> => {
        runs.push(record.messageId);
        return 'processed';
      },
      { recordScope: twiceScope, budget, onUnexpectedError: (record) => unexpected.push(record.messageId) },
    );

    // THEN each delivery is processed once, as for a scope that throws or never runs the record the contract breach is
    // caught; instead each record ran twice and the budget counted 4 starts for a batch of 2
    expect(runs).toEqual(['a', 'b']);
  });
});
