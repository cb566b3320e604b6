/**
 * Review r8 (issue 40's `recordScope`): what the batch does with a record scope that breaks its contract in ways the
 * batch does not check. Each test is a finding; each failed on s8-rv8 (27b8873) when committed. Pure: processBatch
 * touches no AWS service; the invocation's time is a virtual clock read through a Lambda-like context.
 */
import { describe, expect, test } from 'vitest';
import { processBatch, type RecordOutcome, type RecordScope } from '../../lambda/consumer/batch';
import { sqsRecord } from './helpers';

describe('review r8: recordScope', () => {
  test('R8-1: a scope that runs the record but resolves with something else does not acknowledge a failed record', async () => {
    // GIVEN a record whose processing fails (SQS must deliver it again), and a scope that runs it but does not pass
    // its outcome on: `async (record, process) => { await storage.run(id, process); }`, one `return` short, a slip a
    // JavaScript handler (no type check) makes, or a tracer wrapper that returns its own value
    const records = [sqsRecord('a', { messageId: 'a' })];
    const ran: string[] = [];
    const forgetfulScope = (async (record: { messageId: string }, process: () => Promise<unknown>) => {
      ran.push(record.messageId);
      await process();
    }) as unknown as RecordScope;

    // WHEN the batch runs
    const response = await processBatch(records, async (): Promise<RecordOutcome> => 'failed', { recordScope: forgetfulScope });

    // THEN the record ran, failed, and is reported for redelivery; instead the batch took the scope's `undefined` as
    // the outcome, which is not a retried outcome, so the failed record is acknowledged and SQS deletes it: lost
    expect(ran).toEqual(['a']);
    expect(response.batchItemFailures).toEqual([{ itemIdentifier: 'a' }]);
  });
});
