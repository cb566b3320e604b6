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
  test("R8-3: a scope's own time after the record (a flush, a subsegment's close) is in the invocation's budget: the batch ends before the deadline", async () => {
    // GIVEN an invocation with 3,600 ms left, a margin of 100 ms, records that take 1,000 ms each, and a scope that
    // spends 1,500 ms after each record (virtual time: the context reads the clock the test advances)
    let now = 0;
    const deadline = 3600;
    const context = { getRemainingTimeInMillis: () => deadline - now };
    const records = ['a', 'b'].map((id) => sqsRecord(id, { messageId: id }));
    const budget = new InvocationBudget(context, records.length, 100);
    const flushingScope: RecordScope = async (_record, process) => {
      const outcome = await process();
      now += 1500; // the scope's flush after the record
      return outcome;
    };
    const started: string[] = [];

    // WHEN the batch runs
    const response = await processBatch(
      records,
      async (record): Promise<RecordOutcome> => {
        started.push(record.messageId);
        now += 1000;
        return 'processed';
      },
      { recordScope: flushingScope, budget },
    );

    // THEN the invocation ends with its margin left. Instead: 'a' ends at 1,000 (E = 1,000 ms, the scope's 1,500 ms
    // not counted), the scope ends at 2,500, 'b' starts with 1,100 left (>= M + 1 x E), ends at 3,500 and its scope at
    // 5,000: 1,400 ms past the deadline, where Lambda kills the invocation and the whole batch comes back
    // (corrected by the fix: the reviewer also expected 'b' to start; with the scope's time counted, E is 2,500 ms and
    // 'b' (1,100 ms left) can not start: it is returned untouched, which is what the budget is for)
    expect(started).toEqual(['a']);
    expect(response.batchItemFailures).toEqual([{ itemIdentifier: 'b' }]);
    expect(deadline - now).toBeGreaterThanOrEqual(100);
  });
});
