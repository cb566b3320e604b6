import { AsyncLocalStorage } from 'node:async_hooks';
import { describe, expect, test } from 'vitest';
import { processBatch, recordsBehindInLane, type RecordOutcome } from '../../lambda/consumer/batch';
import { InvocationBudget } from '../../lambda/transaction/invocation-budget';
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

  test('on a FIFO queue, a failure skips the rest of its message group only, and reports it in order', async () => {
    const fifo = (id: string, group: string) => ({ ...sqsRecord(id, { messageId: id }), attributes: { ApproximateReceiveCount: '1', MessageGroupId: group } });
    const records = [fifo('a1', 'a'), fifo('b1', 'b'), fifo('a2', 'a'), fifo('b2', 'b'), fifo('a3', 'a')];
    const attempted: string[] = [];
    const skipped: string[] = [];
    const outcomes: string[] = [];

    const response = await processBatch(
      records,
      async (record) => {
        attempted.push(record.messageId);
        return record.messageId === 'a2' ? 'failed' : 'processed';
      },
      { onSkipped: (record, group) => skipped.push(`${record.messageId}@${group}`), onOutcome: (record, outcome) => outcomes.push(`${record.messageId}:${outcome}`) },
    );

    // groups are independent (and run concurrently when allowed); within a group, batch order holds
    const inGroup = (group: string, list: string[]) => list.filter((entry) => entry.startsWith(group));
    expect(inGroup('a', attempted)).toEqual(['a1', 'a2']);
    expect(inGroup('b', attempted)).toEqual(['b1', 'b2']);
    expect(skipped).toEqual(['a3@a']);
    expect(response.batchItemFailures).toEqual([{ itemIdentifier: 'a2' }, { itemIdentifier: 'a3' }]);
    expect(inGroup('a', outcomes)).toEqual(['a1:processed', 'a2:failed', 'a3:skipped']);
    expect(inGroup('b', outcomes)).toEqual(['b1:processed', 'b2:processed']);
  });

  test('concurrency: at most that many records at once; FIFO groups run concurrently, each in order, stopping at its first failure', async () => {
    const fifo = (id: string, group: string) => ({ ...sqsRecord(id, { messageId: id }), attributes: { ApproximateReceiveCount: '1', MessageGroupId: group } });
    const records = ['a', 'b', 'c', 'd'].flatMap((group) => [1, 2, 3].map((n) => fifo(`${group}${n}`, group)));
    let running = 0;
    let maxRunning = 0;
    const started: string[] = [];
    const response = await processBatch(
      records,
      async (record) => {
        started.push(record.messageId);
        running += 1;
        maxRunning = Math.max(maxRunning, running);
        await new Promise((resolve) => setTimeout(resolve, 5));
        running -= 1;
        return record.messageId === 'b2' ? 'failed' : 'processed';
      },
      { concurrency: 3 },
    );
    expect(maxRunning).toBe(3);
    for (const group of ['a', 'c', 'd']) expect(started.filter((id) => id.startsWith(group))).toEqual([`${group}1`, `${group}2`, `${group}3`]);
    expect(started.filter((id) => id.startsWith('b'))).toEqual(['b1', 'b2']);
    expect(response.batchItemFailures).toEqual([{ itemIdentifier: 'b2' }, { itemIdentifier: 'b3' }]);
  });

  test('concurrency on a standard queue: records of one lane run one after another, in batch order; other records run alongside', async () => {
    const records = ['x1', 'y1', 'x2', 'z1', 'x3'].map((id) => sqsRecord(id, { messageId: id }));
    const running = new Set<string>();
    const overlapsWithinLane: string[] = [];
    const order: string[] = [];
    let maxRunning = 0;
    const response = await processBatch(
      records,
      async (record) => {
        const lane = record.messageId[0] as string;
        if ([...running].some((id) => id.startsWith(lane))) overlapsWithinLane.push(record.messageId);
        running.add(record.messageId);
        maxRunning = Math.max(maxRunning, running.size);
        order.push(record.messageId);
        await new Promise((resolve) => setTimeout(resolve, 5));
        running.delete(record.messageId);
        return record.messageId === 'x1' ? 'failed' : 'processed';
      },
      { concurrency: 10, laneOf: (record) => record.messageId[0] },
    );
    expect(overlapsWithinLane).toEqual([]);
    expect(order.filter((id) => id.startsWith('x'))).toEqual(['x1', 'x2', 'x3']);
    expect(maxRunning).toBe(3);
    // a standard queue's lane does not stop at a failure
    expect(response.batchItemFailures).toEqual([{ itemIdentifier: 'x1' }]);
  });

  test.each([0, 1.5, Number.NaN])('refuses a concurrency of %s', async (concurrency) => {
    await expect(processBatch([sqsRecord('a')], async () => 'processed', { concurrency })).rejects.toThrow(/concurrency must be a whole number of at least 1/);
  });

  test('on a FIFO queue, a processor that throws also stops its group', async () => {
    const fifo = (id: string) => ({ ...sqsRecord(id, { messageId: id }), attributes: { MessageGroupId: 'g' } });
    const response = await processBatch([fifo('1'), fifo('2')], async (record) => {
      if (record.messageId === '1') throw new Error('boom');
      return 'processed';
    });
    expect(response.batchItemFailures).toEqual([{ itemIdentifier: '1' }, { itemIdentifier: '2' }]);
  });

  test('dead-lettered, blocked and duplicate records are acknowledged; they do not stop a FIFO group', async () => {
    const outcomes: RecordOutcome[] = ['dead-lettered', 'blocked', 'duplicate', 'processed'];
    const records = outcomes.map((outcome, index) => ({ ...sqsRecord(outcome, { messageId: `m${index}` }), attributes: { MessageGroupId: 'g' } }));
    const seen: string[] = [];
    const response = await processBatch(records, async (record) => {
      seen.push(record.messageId);
      return record.body as RecordOutcome;
    });
    expect(seen).toEqual(['m0', 'm1', 'm2', 'm3']);
    expect(response.batchItemFailures).toEqual([]);
  });

  test("a record scope wraps each record's whole turn: its start check on the invocation's time, its processing and its clock's end", async () => {
    // GIVEN a scope that carries the record's message id, and a budget whose every time read says who asked
    const scope = new AsyncLocalStorage<string>();
    const timeReads: string[] = [];
    const context = {
      getRemainingTimeInMillis: () => {
        timeReads.push(scope.getStore() ?? 'outside');
        return 10_000;
      },
    };
    const records = ['a', 'b', 'c'].map((id) => sqsRecord(id, { messageId: id }));
    const seenInside: string[] = [];

    // WHEN the batch runs two at a time inside the scope
    const response = await processBatch(
      records,
      async (record, clock) => {
        seenInside.push(`${record.messageId}:${scope.getStore() ?? 'outside'}`);
        clock?.pause();
        await new Promise((resolve) => setImmediate(resolve));
        clock?.resume();
        return 'processed';
      },
      { concurrency: 2, budget: new InvocationBudget(context, records.length, 100), recordScope: (record, process) => scope.run(record.messageId, process) },
    );

    // THEN every record ran in its own scope, and no read of the invocation's time came from outside one
    expect(response.batchItemFailures).toEqual([]);
    expect(seenInside.sort()).toEqual(['a:a', 'b:b', 'c:c']);
    expect(timeReads.length).toBeGreaterThanOrEqual(records.length * 2);
    expect(timeReads).not.toContain('outside');
    expect(new Set(timeReads)).toEqual(new Set(['a', 'b', 'c']));
  });

  test.each([
    ['throws before running the record', async (): Promise<never> => Promise.reject(new Error('scope broke'))],
    ['resolves without running the record', async (): Promise<never> => undefined as never],
  ])('a record scope that %s fails that record alone, reported; the others are processed', async (_case, brokenScope) => {
    const records = ['a', 'b', 'c'].map((id) => sqsRecord(id, { messageId: id }));
    const processed: string[] = [];
    const unexpected: string[] = [];
    const response = await processBatch(
      records,
      async (record) => {
        processed.push(record.messageId);
        return 'processed';
      },
      {
        recordScope: (record, process) => (record.messageId === 'b' ? brokenScope() : process()),
        onUnexpectedError: (record, error) => unexpected.push(`${record.messageId}:${(error as Error).message}`),
      },
    );
    expect(processed).toEqual(['a', 'c']);
    expect(unexpected).toHaveLength(1);
    expect(unexpected[0]).toMatch(/^b:(scope broke|the record scope resolved without running the record)$/);
    expect(response.batchItemFailures).toEqual([{ itemIdentifier: 'b' }]);
  });

  test('an empty batch has no failures', async () => {
    expect(await processBatch([], async () => 'failed')).toEqual({ batchItemFailures: [] });
  });
});

describe('recordsBehindInLane (which records of a batch may wait for the batch read)', () => {
  test("the records after the first of their FIFO group or lane, and no record first in its lane (a record with no lane is first in its own)", () => {
    const inGroup = (messageId: string, groupId: string) => ({ ...sqsRecord(messageId, { messageId }), attributes: { MessageGroupId: groupId } });
    const records = [inGroup('a1', 'a'), inGroup('b1', 'b'), inGroup('a2', 'a'), sqsRecord('x', { messageId: 'x1' }), sqsRecord('x', { messageId: 'x2' }), sqsRecord('y', { messageId: 'y1' }), inGroup('a3', 'a')];
    const laneOf = (record: { body: string }) => (record.body === 'y' ? undefined : record.body);
    expect([...recordsBehindInLane(records, laneOf)].map((record) => record.messageId)).toEqual(['a2', 'a3', 'x2']);
    expect(recordsBehindInLane(records.filter((record) => record.messageId.endsWith('1'))).size).toBe(0);
  });
});
