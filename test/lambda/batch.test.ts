import { describe, expect, test } from 'vitest';
import { processBatch, type RecordOutcome } from '../../lambda/consumer/batch';
import { sqsRecord } from './helpers';

describe('processBatch', () => {
  test('reports exactly the failed records, in batch order', async () => {
    const outcomes: RecordOutcome[] = ['processed', 'failed', 'duplicate', 'dead-lettered', 'failed'];
    const records = outcomes.map((outcome, index) => sqsRecord(outcome, { messageId: `m${index}` }));
    const response = await processBatch(records, async (record) => record.body as RecordOutcome);
    expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: 'm1' }, { itemIdentifier: 'm4' }] });
  });

  test('a processor that throws fails its record only, and is reported', async () => {
    const records = [sqsRecord('a', { messageId: 'a' }), sqsRecord('b', { messageId: 'b' }), sqsRecord('c', { messageId: 'c' })];
    const seen: string[] = [];
    const unexpected: string[] = [];
    const response = await processBatch(
      records,
      async (record) => {
        seen.push(record.messageId);
        if (record.messageId === 'b') throw new Error('boom');
        return 'processed';
      },
      { onUnexpectedError: (record, error) => unexpected.push(`${record.messageId}:${(error as Error).message}`) },
    );
    expect(seen).toEqual(['a', 'b', 'c']);
    expect(unexpected).toEqual(['b:boom']);
    expect(response.batchItemFailures).toEqual([{ itemIdentifier: 'b' }]);
  });

  test('processes records one at a time', async () => {
    let running = 0;
    let maxRunning = 0;
    const records = [1, 2, 3].map((n) => sqsRecord(String(n)));
    await processBatch(records, async () => {
      running += 1;
      maxRunning = Math.max(maxRunning, running);
      await new Promise((resolve) => setTimeout(resolve, 5));
      running -= 1;
      return 'processed';
    });
    expect(maxRunning).toBe(1);
  });

  test('an empty batch has no failures', async () => {
    expect(await processBatch([], async () => 'failed')).toEqual({ batchItemFailures: [] });
  });
});
