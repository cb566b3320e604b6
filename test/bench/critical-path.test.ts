import { describe, expect, test } from 'vitest';
import { causalPath, criticalPath, soloServiceTimes, type TimedRequest } from '../../bench/support/latency/critical-path';

/** A request on a hand-built timeline (milliseconds are only positions here: nothing is timed). */
const at = (operation: string, startMs: number, endMs: number): TimedRequest => ({ operation, startMs, endMs });

describe('criticalPath: the longest chain of requests, each starting at or after the previous one ended', () => {
  test('an invocation with no request has no round trip', () => {
    expect(criticalPath([])).toEqual({ roundTrips: 0, operations: [], modeledMs: 0 });
  });

  test('requests one after another are all on the chain', () => {
    const path = criticalPath([at('PutItem', 0, 10), at('UpdateItem', 10, 20), at('UpdateItem', 25, 30)]);
    expect(path.roundTrips).toBe(3);
    expect(path.operations).toEqual(['PutItem', 'UpdateItem', 'UpdateItem']);
  });

  test('overlapping requests are one round trip, whatever DynamoDB Local made of them', () => {
    // ten transactions sent at once and served one after another: ends spread out, each started before any ended
    const concurrent = Array.from({ length: 10 }, (_, i) => at('TransactWriteItems', i * 0.1, 5 + i * 5));
    expect(criticalPath(concurrent).roundTrips).toBe(1);
  });

  test('a read, then transactions at once, then a second transaction of one lane: three round trips', () => {
    const path = criticalPath([
      at('BatchGetItem', 0, 4),
      at('TransactWriteItems', 4.2, 12),
      at('TransactWriteItems', 4.3, 30), // slow, but alone: one round trip after the read
      at('TransactWriteItems', 4.4, 9),
      at('TransactWriteItems', 9.5, 15), // the second record of the third lane
    ]);
    expect(path.roundTrips).toBe(3);
    expect(path.operations).toEqual(['BatchGetItem', 'TransactWriteItems', 'TransactWriteItems']);
  });

  test('requests nested inside a long one chain among themselves, not with it', () => {
    const path = criticalPath([at('TransactWriteItems', 0, 100), at('PutItem', 10, 20), at('UpdateItem', 30, 40), at('UpdateItem', 50, 60)]);
    expect(path.roundTrips).toBe(3);
    expect(path.operations).toEqual(['PutItem', 'UpdateItem', 'UpdateItem']);
  });

  test('a request that starts before the previous one ended is not after it (one instant of overlap is enough)', () => {
    expect(criticalPath([at('PutItem', 0, 10), at('UpdateItem', 9.999, 20)]).roundTrips).toBe(1);
    expect(criticalPath([at('PutItem', 0, 10), at('UpdateItem', 10, 20)]).roundTrips).toBe(2);
  });

  test('the order the requests are listed in does not matter', () => {
    const timeline = [at('A', 0, 2), at('B', 3, 5), at('C', 1, 4), at('D', 6, 8), at('E', 4.5, 9)];
    const reversed = [...timeline].reverse();
    expect(criticalPath(reversed)).toEqual(criticalPath(timeline));
    expect(criticalPath(timeline).roundTrips).toBe(3); // A, B, D (or C, E: also three)
  });

  test('the modelled latency is the heaviest chain by the cost per operation, which need not be the longest by count', () => {
    const timeline = [at('GetItem', 0, 1), at('GetItem', 1, 2), at('GetItem', 2, 3), at('TransactWriteItems', 0.5, 3)];
    const cost = (operation: string): number => (operation === 'TransactWriteItems' ? 20 : 5);
    const path = criticalPath(timeline, cost);
    expect(path.roundTrips).toBe(3);
    expect(path.operations).toEqual(['GetItem', 'GetItem', 'GetItem']);
    expect(path.modeledMs).toBe(20); // the lone transaction outweighs three reads (15)
    expect(criticalPath(timeline, () => 10).modeledMs).toBe(30);
  });

  test('without a cost each round trip weighs 1', () => {
    expect(criticalPath([at('A', 0, 1), at('B', 2, 3)]).modeledMs).toBe(2);
  });

  test('refuses a request that ends before it starts', () => {
    expect(() => criticalPath([at('PutItem', 5, 4)])).toThrow('a request ends before it starts: PutItem 5-4');
  });
});

/** A request sent on from the response of request `after` (its index in the list). */
const following = (operation: string, startMs: number, endMs: number, after: number): TimedRequest => ({ operation, startMs, endMs, after });

describe('causalPath: the longest chain of requests each sent on from the response of the one before', () => {
  test('an invocation with no request has no round trip', () => {
    expect(causalPath([])).toEqual({ roundTrips: 0, operations: [], modeledMs: 0 });
  });

  test('Powertools\' three requests per record, two records at once, one queued by the server: three round trips, not five', () => {
    // the server serves record 0's three requests while record 1's Put waits; record 1's follow-ups then start after
    // record 0's ended, so the timing chain runs on from one record's requests to the other's; the causal one does not
    const requests = [
      at('PutItem', 0, 10), // record 0
      at('PutItem', 0.1, 30), // record 1, queued
      following('UpdateItem', 10, 20, 0),
      following('UpdateItem', 20, 29, 2),
      following('UpdateItem', 30, 40, 1),
      following('UpdateItem', 40, 50, 4),
    ];
    expect(criticalPath(requests).roundTrips).toBe(5);
    const path = causalPath(requests);
    expect(path.roundTrips).toBe(3);
    expect(path.operations).toEqual(['PutItem', 'UpdateItem', 'UpdateItem']);
  });

  test('a read, then the batch\'s transactions at once, then the second record of one lane: three round trips', () => {
    const path = causalPath([
      at('BatchGetItem', 0, 4),
      following('TransactWriteItems', 4.2, 12, 0),
      following('TransactWriteItems', 4.3, 30, 0),
      following('TransactWriteItems', 4.4, 9, 0),
      following('TransactWriteItems', 9.5, 15, 3),
    ]);
    expect(path.roundTrips).toBe(3);
    expect(path.operations).toEqual(['BatchGetItem', 'TransactWriteItems', 'TransactWriteItems']);
  });

  test('the modelled latency is the heaviest chain by the cost per operation, which need not be the longest by count', () => {
    const requests = [at('GetItem', 0, 1), following('GetItem', 1, 2, 0), following('GetItem', 2, 3, 1), at('TransactWriteItems', 0, 3)];
    const path = causalPath(requests, (operation) => (operation === 'TransactWriteItems' ? 20 : 5));
    expect(path.roundTrips).toBe(3);
    expect(path.modeledMs).toBe(20);
    expect(causalPath(requests, () => 10).modeledMs).toBe(30);
  });

  test('refuses a request that follows itself or a later one', () => {
    expect(() => causalPath([following('PutItem', 0, 1, 0)])).toThrow('request 0 (PutItem) follows 0, which is not an earlier request of the list');
    expect(() => causalPath([following('PutItem', 0, 1, 1), at('GetItem', 0, 1)])).toThrow('follows 1');
  });
});

describe('soloServiceTimes: the durations per operation of the requests alone in flight', () => {
  test('takes only the requests nothing overlapped: the 10th percentile and the median of each operation', () => {
    const times = soloServiceTimes([
      at('PutItem', 0, 3),
      at('PutItem', 10, 14),
      at('PutItem', 20, 25),
      at('TransactWriteItems', 30, 36),
      at('TransactWriteItems', 40, 44),
      // overlapping: neither counts
      at('UpdateItem', 50, 60),
      at('TransactWriteItems', 55, 90),
    ]);
    expect([...times.entries()]).toEqual([
      ['PutItem', { p10Ms: 3, medianMs: 4, samples: 3 }],
      ['TransactWriteItems', { p10Ms: 4, medianMs: 5, samples: 2 }],
    ]);
  });

  test('requests that touch at an instant are both alone', () => {
    expect(soloServiceTimes([at('GetItem', 0, 2), at('GetItem', 2, 6)]).get('GetItem')).toEqual({ p10Ms: 2, medianMs: 3, samples: 2 });
  });

  test('the 10th percentile by nearest rank: the second fastest of 20, the fastest of 10', () => {
    const sequential = (n: number): TimedRequest[] => Array.from({ length: n }, (_, i) => at('PutItem', i * 100, i * 100 + (n - i)));
    expect(soloServiceTimes(sequential(20)).get('PutItem')?.p10Ms).toBe(2);
    expect(soloServiceTimes(sequential(10)).get('PutItem')?.p10Ms).toBe(1);
  });

  test('an operation never alone in flight has no entry', () => {
    expect(soloServiceTimes([at('BatchGetItem', 0, 5), at('TransactWriteItems', 1, 3)]).size).toBe(0);
  });
});
