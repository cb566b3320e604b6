/** The batch's item locks (lambda/consumer/item-locks.ts) and the item identities they lock (lambda/transaction/item-identity.ts). */
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { ItemLocks } from '../../lambda/consumer/item-locks';
import { actionItemIdentity, keySchemasOf } from '../../lambda/transaction/item-identity';

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('ItemLocks', () => {
  test('a later holder of an item waits for the earlier one; other items do not wait', async () => {
    const locks = new ItemLocks();
    const first = await locks.acquire(['a', 'b']);
    const events: string[] = [];
    const second = locks.acquire(['b']).then((lease) => (events.push('second'), lease));
    const third = locks.acquire(['c']).then((lease) => (events.push('third'), lease));
    await tick();
    expect(events).toEqual(['third']);
    first.release();
    (await second).release();
    expect(events).toEqual(['third', 'second']);
    (await third).release();
  });

  test('one item named twice in one acquisition does not wait for itself', async () => {
    const lease = await new ItemLocks().acquire(['a', 'a']);
    lease.release();
  });

  test('release is idempotent and does not free an item a later holder has taken', async () => {
    const locks = new ItemLocks();
    const first = await locks.acquire(['a']);
    const second = locks.acquire(['a']);
    first.release();
    const held = await second;
    first.release(); // again: must not let a third one past the second
    let thirdIn = false;
    const third = locks.acquire(['a']).then((lease) => ((thirdIn = true), lease));
    await tick();
    expect(thirdIn).toBe(false);
    held.release();
    (await third).release();
  });

  test('settled() waits for the holders of now, not for later ones', async () => {
    const locks = new ItemLocks();
    const held = await locks.acquire(['a']);
    let settled = false;
    const waiting = locks.settled().then(() => (settled = true));
    await tick();
    expect(settled).toBe(false);
    held.release();
    await waiting;
    expect(settled).toBe(true);
  });

  test('property: commits with any overlapping item sets all finish, and no item ever has two holders at once', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ items: fc.uniqueArray(fc.constantFrom('a', 'b', 'c', 'd', 'e'), { minLength: 1, maxLength: 3 }), work: fc.nat(3) }), { minLength: 1, maxLength: 12 }),
        async (commits) => {
          const locks = new ItemLocks();
          const holders = new Map<string, number>();
          let violations = 0;
          await Promise.all(
            commits.map(async ({ items, work }, index) => {
              await Promise.resolve(); // acquisitions interleave with other commits' work
              const lease = await locks.acquire(items);
              for (const item of items) {
                if (holders.has(item)) violations += 1;
                holders.set(item, index);
              }
              for (let i = 0; i < work; i++) await tick();
              for (const item of items) holders.delete(item);
              lease.release();
            }),
          );
          expect(violations).toBe(0);
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe('actionItemIdentity', () => {
  const update = (table: string, key: Record<string, unknown>) => ({ Update: { TableName: table, Key: key, UpdateExpression: 'SET x = :x' } });
  const put = (table: string, item: Record<string, unknown>) => ({ Put: { TableName: table, Item: item } });

  test('actions with a Key name their item by table and key, in any attribute order', () => {
    const schemas = new Map<string, string[]>();
    expect(actionItemIdentity(update('T', { pk: 'a', sk: 1 }), schemas)).toBe(actionItemIdentity(update('T', { sk: 1, pk: 'a' }), schemas));
    expect(actionItemIdentity(update('T', { pk: 'a', sk: 1 }), schemas)).not.toBe(actionItemIdentity(update('T', { pk: 'a', sk: '1' }), schemas));
    expect(actionItemIdentity(update('T', { pk: 'a' }), schemas)).not.toBe(actionItemIdentity(update('U', { pk: 'a' }), schemas));
  });

  test("a Put's item is told only once its table's key names are known or learnt from another action's Key", () => {
    const schemas = new Map<string, string[]>();
    const putA = put('T', { pk: 'a', sk: 1, other: 'x' });
    expect(actionItemIdentity(putA, schemas)).toBeUndefined();
    keySchemasOf([update('T', { sk: 2, pk: 'b' })], new Map(), schemas);
    expect(actionItemIdentity(putA, schemas)).toBe(actionItemIdentity(update('T', { pk: 'a', sk: 1 }), schemas));
    // known schemas are kept, not overridden by what an action suggests
    keySchemasOf([update('K', { pk: 'x', extra: 'y' })], new Map([['K', { partitionKey: 'pk' }]]), schemas);
    expect(schemas.get('K')).toEqual(['pk']);
  });
});
