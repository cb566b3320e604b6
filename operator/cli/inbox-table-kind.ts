/**
 * Whether a table an operator names as an inbox table is one (`fence carry`): an inbox table's key is the partition
 * key `pk` alone; the outbox table's is `pk` and `sk`. Told from DescribeTable, before anything reads the table, so a
 * table of another kind is refused by name, not by DynamoDB's error about key conditions.
 */
import { DescribeTableCommand } from '@aws-sdk/client-dynamodb';
import { TABLE_SCHEMA } from '../../lambda/contract/wire-format';
import type { CommandContext } from './command';
import { terminalText } from './terminal-text';

/** Why `table`, given as `option`, is not an inbox table, or undefined when its key is an inbox table's. */
export async function notAnInboxTable(context: CommandContext, option: string, table: string): Promise<string | undefined> {
  const keys = (await context.client().send(new DescribeTableCommand({ TableName: table }))).Table?.KeySchema ?? [];
  if (keys.length === 1 && keys[0]?.AttributeName === TABLE_SCHEMA.PARTITION_KEY && keys[0]?.KeyType === 'HASH') return undefined;
  const key = keys.map((each) => `${terminalText(each.AttributeName ?? '?')} (${each.KeyType})`).join(', ');
  const outbox = keys.length === 2 && keys.some((each) => each.AttributeName === TABLE_SCHEMA.PARTITION_KEY) && keys.some((each) => each.AttributeName === TABLE_SCHEMA.SORT_KEY);
  return (
    `${option} '${terminalText(table)}' is not an inbox table: its key is ${key}${outbox ? ", an outbox table's" : ''}; ` +
    `'fence carry' takes the subscriber's inbox tables (key ${TABLE_SCHEMA.PARTITION_KEY} alone): --from-table the one restored from (or replaced), --table the restored one`
  );
}
