/**
 * Calibration: requests with known item sizes, to see where DynamoDB Local's reported capacity agrees with AWS's
 * documented rules (as `capacity-rules.ts` and `item-size.ts` compute them) and where it does not.
 */
import { GetItemCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, PutCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { PROCESSING_RECORD } from '../../lambda/contract/wire-format';
import { createTable, EPOCH, progress, type BenchContext } from './fixtures';
import type { Figures } from './meter';
import { fixed, totalOf } from './report';

const TABLES = { a: 'bench-calibration-a', b: 'bench-calibration-b', indexed: 'bench-calibration-indexed' } as const;

/** An item of exactly `bytes` bytes: its key and a padding attribute. */
const padded = (pk: string, bytes: number): Record<string, unknown> => ({ pk, pad: 'x'.repeat(bytes - 'pk'.length - pk.length - 'pad'.length) });

export async function calibrationSection(context: BenchContext): Promise<string> {
  const { admin, metered, meter } = context;
  progress('calibration');
  await Promise.all([createTable(admin, TABLES.a), createTable(admin, TABLES.b), createTable(admin, TABLES.indexed, { blockedMessagesIndex: true })]);
  const doc = DynamoDBDocumentClient.from(metered);
  const unmetered = DynamoDBDocumentClient.from(admin);
  await Promise.all([
    unmetered.send(new PutCommand({ TableName: TABLES.a, Item: padded('r-4096', 4096) })),
    unmetered.send(new PutCommand({ TableName: TABLES.a, Item: padded('r-4097', 4097) })),
    unmetered.send(new PutCommand({ TableName: TABLES.a, Item: padded('c-1536', 1536) })),
    unmetered.send(new PutCommand({ TableName: TABLES.indexed, Item: padded('i-100', 100) })),
  ]);
  const transaction = (...puts: Array<[string, Record<string, unknown>]>) => () =>
    doc.send(new TransactWriteCommand({ TransactItems: puts.map(([table, item]) => ({ Put: { TableName: table, Item: item } })) }));
  const get = (pk: string, consistent: boolean) => () => metered.send(new GetItemCommand({ TableName: TABLES.a, Key: { pk: { S: pk } }, ConsistentRead: consistent }));
  const { a, b } = TABLES;
  const cases: Array<[string, () => Promise<unknown>]> = [
    ['PutItem, 1 item of 1,024 B (WCU)', () => doc.send(new PutCommand({ TableName: a, Item: padded('p-1024', 1024) }))],
    ['PutItem, 1 item of 1,025 B (WCU)', () => doc.send(new PutCommand({ TableName: a, Item: padded('p-1025', 1025) }))],
    ['TransactWriteItems: 1,536 B + 16 B, one table (WCU)', transaction([a, padded('t1-big', 1536)], [a, padded('t1-small', 16)])],
    ['TransactWriteItems: 16 B in table A + 16 B in table B (WCU)', transaction([a, padded('t2-a', 16)], [b, padded('t2-b', 16)])],
    ['TransactWriteItems: 16 B + 16 B, one table (WCU)', transaction([a, padded('t3-a', 16)], [a, padded('t3-b', 16)])],
    ['TransactWriteItems: 16 B + 16 B + 1,536 B, one table (WCU)', transaction([a, padded('t4-a', 16)], [a, padded('t4-b', 16)], [a, padded('t4-big', 1536)])],
    [
      'UpdateItem that puts a ~150 B item into a sparse GSI with projection ALL (WCU: table + index)',
      () =>
        metered.send(
          new UpdateItemCommand({
            TableName: TABLES.indexed,
            Key: { pk: { S: 'i-100' } },
            UpdateExpression: 'SET #s = :s, #t = :t',
            ExpressionAttributeNames: { '#s': PROCESSING_RECORD.BLOCKED_SUBSCRIBER_ATTRIBUTE, '#t': PROCESSING_RECORD.BLOCKED_AT_ATTRIBUTE },
            ExpressionAttributeValues: { ':s': { S: 'Subscriber' }, ':t': { S: EPOCH.toISOString() } },
          }),
        ),
    ],
    [
      'PutItem of 16 B failing its condition on a stored 1,536 B item (WCU)',
      async () => {
        try {
          await doc.send(new PutCommand({ TableName: a, Item: padded('c-1536', 16), ConditionExpression: 'attribute_not_exists(pk)' }));
        } catch (error) {
          if ((error as Error).name !== 'ConditionalCheckFailedException') throw error;
        }
      },
    ],
    ['GetItem, strongly consistent, item of 4,096 B (RCU)', get('r-4096', true)],
    ['GetItem, strongly consistent, item of 4,097 B (RCU)', get('r-4097', true)],
    ['GetItem, strongly consistent, no item (RCU)', get('r-none', true)],
    ['GetItem, eventually consistent, item of 4,097 B (RCU)', get('r-4097', false)],
  ];
  const measured: Array<[string, Figures]> = [];
  for (const [label, request] of cases) measured.push([label, await meter.measure(async () => void (await request()))]);
  const verdict = (rule: number, reported: number, hasReport: boolean): string => {
    if (!hasReport) return 'not reported';
    if (rule === reported) return 'agrees';
    return reported < rule ? '**under-reports**' : '**over-reports**';
  };
  return [
    '## Calibration: DynamoDB Local against the AWS rules',
    '',
    'AWS charges 1 WCU per started 1 KB (1,024 B) of item written (for a replaced or updated item, the larger of old and new), ' +
      'twice that for each item written in a transaction, index write capacity when a write puts an item into a global secondary index, ' +
      'write capacity for a conditional write whose condition fails, and 1 RCU per started 4 KB of item for a strongly consistent read (half for an eventually consistent one). ' +
      'The rule column is computed by the bench from the item sizes.',
    '',
    '| request | AWS rule | reported by DynamoDB Local | |',
    '|---|---:|---:|---|',
    ...measured.map(([label, figures]) => {
      const total = totalOf(figures);
      const rule = total.ruleUnits + total.failedRuleUnits;
      return `| ${label} | ${fixed(rule)} | ${total.reported > 0 ? fixed(total.reportedUnits) : 'nothing'} | ${verdict(rule, total.reportedUnits, total.reported > 0)} |`;
    }),
    '',
    'DynamoDB Local applies the 1 KB rounding of writes, the 4 KB rounding of reads (an absent item costs 1 RCU, an eventually consistent read half), ' +
      'the write into a sparse global secondary index, and the 2x of transactions whose items in each table cost different amounts. ' +
      'When two or more items of one transaction in the same table cost the same, it counts that amount once per table (it adds up the distinct ' +
      'per-item figures), so it under-reports. For a failed conditional write or a cancelled transaction it returns no `ConsumedCapacity` at all, although ' +
      'AWS charges both. The "AWS rule" columns of the results have neither flaw.',
  ].join('\n');
}
