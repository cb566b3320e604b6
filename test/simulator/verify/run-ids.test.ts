/** A verify run's ids (simulator/verify/run-ids.ts): unique per run, applied to every id field of a command alike. */
import { describe, expect, test } from 'vitest';
import { isIdKey, isRunEvent, newRunId, withRunIds } from '../../../simulator/verify/run-ids';
import { placeOrderCommands, fulfilmentCommands } from '../../../example/simulation/scenario';
import { seededRandom, seedNumber } from '../../../simulator/schedule/seeded-random';

describe('verify run ids', () => {
  test('two runs at the same moment with the same seed never share an id', () => {
    const first = newRunId(1_700_000_000_000);
    const second = newRunId(1_700_000_000_000);
    expect(first).not.toBe(second);
    const commands = placeOrderCommands(5, seededRandom(seedNumber('same')));
    const ids = (runId: string) => commands.map((command) => withRunIds(command, runId)).flatMap((command) => [command.orderId, command.customerId]);
    expect(ids(first).filter((id) => ids(second).includes(id))).toEqual([]);
  });

  test('prefixes every id field at any depth, the same way in every command, and nothing else', () => {
    const runId = newRunId(0, () => Buffer.from([1, 2, 3, 4]));
    expect(runId).toBe('v0-01020304');
    expect(withRunIds({ orderId: 'order-00001', total: 5, note: 'order-00001', items: [{ skuId: 'a' }], id: 'x' }, runId)).toEqual({
      orderId: `${runId}-order-00001`,
      total: 5,
      note: 'order-00001',
      items: [{ skuId: `${runId}-a` }],
      id: `${runId}-x`,
    });
    // a fulfilment step still names its order
    const steps = fulfilmentCommands(4, seededRandom(seedNumber('s'))).map((command) => withRunIds(command, runId));
    expect(steps.every((step) => step.orderId.startsWith(`${runId}-order-`))).toBe(true);
  });

  test('recognises plural and one-word lower-case id fields, not English words ending in id', () => {
    for (const key of ['orderIds', 'order_ids', 'ids', 'IDs', 'orderIDs', 'idempotencyKeys', 'orderid', 'customerid', 'skuids', 'txid']) expect([key, isIdKey(key)]).toEqual([key, true]);
    for (const key of ['paid', 'valid', 'invalid', 'grid', 'grids', 'fluid', 'android', 'avoid', 'afraid', 'status', 'said', 'kid', 'bid']) expect([key, isIdKey(key)]).toEqual([key, false]);
    const runId = 'v0-01020304';
    expect(withRunIds({ requestId: 'r', orderIds: ['a', 'b'], paid: 'yes' }, runId)).toEqual({ requestId: `${runId}-r`, orderIds: [`${runId}-a`, `${runId}-b`], paid: 'yes' });
  });

  test("tells the run's events by the run id in their id or data", () => {
    expect(isRunEvent({ id: 'order-placed-v0-01020304-order-00001' }, 'v0-01020304')).toBe(true);
    expect(isRunEvent({ id: 'evt-1', data: { orderId: 'v0-01020304-o' } }, 'v0-01020304')).toBe(true);
    expect(isRunEvent({ id: 'order-placed-order-00001', data: { orderId: 'order-00001' } }, 'v0-01020304')).toBe(false);
  });
});
