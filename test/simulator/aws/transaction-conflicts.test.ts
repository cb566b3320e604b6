/**
 * The arbiter's decisions on their own, with key schemas given in memory: which request meets which ongoing one under
 * the three rules of the Developer Guide, what the refusal says, when items are let go, and what is counted. The same
 * rules against DynamoDB Local, through the proxies: test/support/fault-proxy-conflicts.int.test.ts and
 * test/simulator/faults/dynamodb-proxy-conflicts.int.test.ts.
 */
import { describe, expect, test } from 'vitest';
import { conflictReply, INJECTED_CONFLICT_MESSAGE, TransactionConflicts, type Admission } from '../../../simulator/aws/transaction-conflicts';

const KEY_SCHEMAS: Readonly<Record<string, readonly string[]>> = { orders: ['pk'], lines: ['pk', 'sk'] };

function arbiter(): TransactionConflicts {
  return new TransactionConflicts(async (tableName) => KEY_SCHEMAS[tableName]);
}

const body = (value: unknown): Buffer => Buffer.from(JSON.stringify(value));
const key = (pk: string): Record<string, unknown> => ({ pk: { S: pk } });
const put = (pk: string): Buffer => body({ TableName: 'orders', Item: { ...key(pk), total: { N: '1' } } });
const update = (pk: string): Buffer => body({ TableName: 'orders', Key: key(pk), UpdateExpression: 'SET total = :t' });
const transactWrite = (...pks: string[]): Buffer => body({ TransactItems: pks.map((pk) => ({ Update: { TableName: 'orders', Key: key(pk), UpdateExpression: 'SET total = :t' } })) });
const transactGet = (...pks: string[]): Buffer => body({ TransactItems: pks.map((pk) => ({ Get: { TableName: 'orders', Key: key(pk) } })) });
const batchWrite = (...pks: string[]): Buffer => body({ RequestItems: { orders: pks.map((pk) => ({ PutRequest: { Item: key(pk) } })) } });

/** The admission, which must be a refusal; its reply's body, parsed. */
function refusal(admission: Admission): { status: number; body: Record<string, unknown> } {
  if (admission.admitted) throw new Error('expected the request to be refused, but it was admitted');
  return { status: admission.reply.status, body: JSON.parse(admission.reply.body.toString('utf8')) as Record<string, unknown> };
}

describe('TransactionConflicts: rule 1, a single write meets an ongoing TransactWriteItems', () => {
  test.each([
    ['PutItem', put('o1')],
    ['UpdateItem', update('o1')],
    ['DeleteItem', body({ TableName: 'orders', Key: key('o1') })],
  ])('a %s on an item of the transaction is refused with TransactionConflictException', async (operation, request) => {
    const conflicts = arbiter();
    expect((await conflicts.admit('TransactWriteItems', transactWrite('o1', 'o2'))).admitted).toBe(true);
    const refused = refusal(await conflicts.admit(operation, request));
    expect(refused).toEqual({ status: 400, body: { __type: 'com.amazonaws.dynamodb.v20120810#TransactionConflictException', message: 'Transaction is ongoing for the item' } });
    expect(conflicts.figures()).toEqual({ refused: 1, byOperation: { [operation]: 1 } });
  });

  test('a single write on another item passes, and so does one on the same item once the transaction was released', async () => {
    const conflicts = arbiter();
    const transaction = await conflicts.admit('TransactWriteItems', transactWrite('o1'));
    expect((await conflicts.admit('PutItem', put('o2'))).admitted).toBe(true);
    if (transaction.admitted) transaction.release();
    expect((await conflicts.admit('PutItem', put('o1'))).admitted).toBe(true);
    expect(conflicts.figures().refused).toBe(0);
  });

  test('single writes never conflict with each other, and a transaction meeting an ongoing single write passes (not a listed conflict)', async () => {
    const conflicts = arbiter();
    expect((await conflicts.admit('PutItem', put('o1'))).admitted).toBe(true);
    expect((await conflicts.admit('UpdateItem', update('o1'))).admitted).toBe(true);
    expect((await conflicts.admit('TransactWriteItems', transactWrite('o1'))).admitted).toBe(true);
  });

  test("a Put's item is named by the key attributes of its table's key schema (partition and sort key)", async () => {
    const conflicts = arbiter();
    const line = (sk: string, extra: Record<string, unknown> = {}): Record<string, unknown> => ({ pk: { S: 'order-1' }, sk: { S: sk }, ...extra });
    await conflicts.admit('TransactWriteItems', body({ TransactItems: [{ Put: { TableName: 'lines', Item: line('1', { qty: { N: '2' } }) } }] }));
    expect(refusal(await conflicts.admit('UpdateItem', body({ TableName: 'lines', Key: line('1'), UpdateExpression: 'SET qty = :q' }))).status).toBe(400);
    expect((await conflicts.admit('UpdateItem', body({ TableName: 'lines', Key: line('2'), UpdateExpression: 'SET qty = :q' }))).admitted).toBe(true);
  });
});

describe('TransactionConflicts: rule 2, a TransactWriteItems meets another ongoing one', () => {
  test('is cancelled with one reason per action: TransactionConflict where the item is held, None elsewhere', async () => {
    const conflicts = arbiter();
    await conflicts.admit('TransactWriteItems', transactWrite('o1'));
    const refused = refusal(await conflicts.admit('TransactWriteItems', transactWrite('o9', 'o1', 'o8')));
    expect(refused.body).toEqual({
      __type: 'com.amazonaws.dynamodb.v20120810#TransactionCanceledException',
      Message: 'Transaction cancelled, please refer cancellation reasons for specific reasons [None, TransactionConflict, None]',
      CancellationReasons: [{ Code: 'None' }, { Code: 'TransactionConflict', Message: 'Transaction is ongoing for the item' }, { Code: 'None' }],
    });
    expect(conflicts.figures()).toEqual({ refused: 1, byOperation: { TransactWriteItems: 1 } });
  });

  test('a refused transaction holds nothing: a third one on its other items passes', async () => {
    const conflicts = arbiter();
    await conflicts.admit('TransactWriteItems', transactWrite('o1'));
    refusal(await conflicts.admit('TransactWriteItems', transactWrite('o2', 'o1')));
    expect((await conflicts.admit('TransactWriteItems', transactWrite('o2'))).admitted).toBe(true);
  });

  test('transactions on disjoint items both pass', async () => {
    const conflicts = arbiter();
    expect((await conflicts.admit('TransactWriteItems', transactWrite('o1', 'o2'))).admitted).toBe(true);
    expect((await conflicts.admit('TransactWriteItems', transactWrite('o3', 'o4'))).admitted).toBe(true);
  });

  test('of two transactions on one item decided at once, exactly one passes: the check and the hold are one step', async () => {
    const conflicts = arbiter();
    const admissions = await Promise.all([conflicts.admit('TransactWriteItems', transactWrite('o1')), conflicts.admit('TransactWriteItems', transactWrite('o1'))]);
    expect(admissions.map((admission) => admission.admitted).sort()).toEqual([false, true]);
  });

  test('an item stays held while any of its holders is ongoing; releasing twice lets go once', async () => {
    const conflicts = arbiter();
    const first = await conflicts.admit('PutItem', put('o1'));
    const second = await conflicts.admit('PutItem', put('o1'));
    if (!first.admitted || !second.admitted) throw new Error('single writes must pass');
    first.release();
    first.release();
    expect((await conflicts.admit('TransactGetItems', transactGet('o1'))).admitted).toBe(false);
    second.release();
    expect((await conflicts.admit('TransactGetItems', transactGet('o1'))).admitted).toBe(true);
  });
});

describe('TransactionConflicts: rule 3, a TransactGetItems meets an ongoing write', () => {
  test.each([
    ['TransactWriteItems', transactWrite('o1')],
    ['BatchWriteItem', batchWrite('o2', 'o1')],
    ['PutItem', put('o1')],
    ['UpdateItem', update('o1')],
    ['DeleteItem', body({ TableName: 'orders', Key: key('o1') })],
  ])('an ongoing %s on one of its items cancels it', async (operation, request) => {
    const conflicts = arbiter();
    expect((await conflicts.admit(operation, request)).admitted).toBe(true);
    const refused = refusal(await conflicts.admit('TransactGetItems', transactGet('o3', 'o1')));
    expect(refused.body.CancellationReasons).toEqual([{ Code: 'None' }, { Code: 'TransactionConflict', Message: 'Transaction is ongoing for the item' }]);
    expect(conflicts.figures()).toEqual({ refused: 1, byOperation: { TransactGetItems: 1 } });
  });

  test('an ongoing TransactGetItems holds nothing, and a BatchWriteItem is never refused', async () => {
    const conflicts = arbiter();
    await conflicts.admit('TransactGetItems', transactGet('o1'));
    expect((await conflicts.admit('TransactWriteItems', transactWrite('o1'))).admitted).toBe(true);
    expect((await conflicts.admit('BatchWriteItem', batchWrite('o1'))).admitted).toBe(true);
    expect((await conflicts.admit('PutItem', put('o2'))).admitted).toBe(true);
  });
});

describe('TransactionConflicts: what it leaves to DynamoDB Local', () => {
  test('reads and other operations pass and hold nothing', async () => {
    const conflicts = arbiter();
    await conflicts.admit('TransactWriteItems', transactWrite('o1'));
    expect((await conflicts.admit('GetItem', body({ TableName: 'orders', Key: key('o1') }))).admitted).toBe(true);
    expect((await conflicts.admit('Query', body({ TableName: 'orders' }))).admitted).toBe(true);
  });

  test('a malformed body, or one naming a table the resolver does not know, passes and holds nothing', async () => {
    const conflicts = arbiter();
    await conflicts.admit('TransactWriteItems', transactWrite('o1'));
    expect((await conflicts.admit('PutItem', Buffer.from('{not json'))).admitted).toBe(true);
    expect((await conflicts.admit('PutItem', body({ TableName: 'orders', Item: { total: { N: '1' } } }))).admitted).toBe(true);
    expect((await conflicts.admit('PutItem', body({ TableName: 'unknown', Item: key('o1') }))).admitted).toBe(true);
    expect((await conflicts.admit('TransactWriteItems', body({ TransactItems: [{ Update: { TableName: 'unknown', Key: key('x') } }] }))).admitted).toBe(true);
    expect((await conflicts.admit('TransactWriteItems', body({ TransactItems: [{ Update: { TableName: 'unknown', Key: key('x') } }] }))).admitted).toBe(true);
    expect(conflicts.figures()).toEqual({ refused: 0, byOperation: {} });
  });
});

describe('conflictReply', () => {
  test('is a 400 in the JSON protocol, with the length of its body', () => {
    const reply = conflictReply('TransactWriteItems', [true]);
    expect(reply.status).toBe(400);
    expect(reply.headers).toMatchObject({ 'content-type': 'application/x-amz-json-1.0', 'content-length': String(reply.body.length) });
  });

  test("an injected conflict (fault steering) says so in DynamoDB's message, so a dead letter it ended in is told apart from the app's", () => {
    // the runtime logs the refusal's message as the record's failure, and a dead letter's reason is its last failure
    const single = JSON.parse(conflictReply('PutItem', [true], INJECTED_CONFLICT_MESSAGE).body.toString('utf8')) as { __type: string; message: string };
    const transaction = JSON.parse(conflictReply('TransactWriteItems', [true, true], INJECTED_CONFLICT_MESSAGE).body.toString('utf8')) as { CancellationReasons: { Code: string; Message: string }[] };
    expect(single).toEqual({ __type: 'com.amazonaws.dynamodb.v20120810#TransactionConflictException', message: INJECTED_CONFLICT_MESSAGE });
    expect(transaction.CancellationReasons).toEqual([{ Code: 'TransactionConflict', Message: INJECTED_CONFLICT_MESSAGE }, { Code: 'TransactionConflict', Message: INJECTED_CONFLICT_MESSAGE }]);
    expect(INJECTED_CONFLICT_MESSAGE).toMatch(/^Transaction is ongoing for the item \(injected by the simulator's fault steering/);
  });
});
