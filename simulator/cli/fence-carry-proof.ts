/**
 * What proves the table `fence carry` carries from is the one the subscriber's inbox table was restored from, or the
 * one it replaced (review ro13, RO13-5). Subscriber names (`Billing`) and aggregate ids (`order-42`) repeat across flows
 * and environments: carried from another flow's inbox, this subscriber's fences would pass events it never applied.
 * Proven by DynamoDB's restore summary of the restored table (the table it was restored from), else by an event id
 * this subscriber recorded in the restored table (an inbox record, or the event a fence applied) that the table carried
 * from records too (event ids are unique), else by the Operator output of the deployment that used the table carried
 * from (`--from-subscriber-output`). Reads only: DescribeTable, Scan, GetItem.
 */
import { DescribeTableCommand } from '@aws-sdk/client-dynamodb';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { SEQUENCE_FENCE } from '../../lambda/contract/ordered-wire-format';
import { INBOX_ITEM, recordKey, TABLE_SCHEMA } from '../../lambda/contract/wire-format';
import { toDocumentClient } from '../../lambda/transaction/document-client';
import type { CommandContext } from './command';
import { scanItems } from './scan-items';
import { terminalText } from './terminal-text';

/** How many event ids of the restored table are looked up in the table carried from, at most. */
const MAX_LOOKUPS = 50;

/** The start of the refusal when nothing proves `fromTable` is the table `table` was restored from. */
export function carrySourceRefusalStart(fromTable: string, table: string): string {
  return `nothing proves '${terminalText(table)}' was restored from '${terminalText(fromTable)}' (or replaced it)`;
}

/** The table a restore summary's source ARN names (`arn:aws:dynamodb:<region>:<account>:table/<name>`). */
function tableNameOf(arn: string): string {
  return arn.slice(arn.indexOf(':table/') + ':table/'.length).split('/')[0] ?? arn;
}

/**
 * Proves `fromTable` is where `table` came from, for `subscriber`: `{ proven }` says by what, `{ refusal }` why not.
 * `deployedInboxTable`: the inbox table the Operator output of the deployment carried from names (`--from-subscriber-output`).
 */
export async function proveCarrySource(context: CommandContext, subscriber: string, fromTable: string, table: string, deployedInboxTable?: string): Promise<{ proven: string } | { refusal: string }> {
  const described = await context.client().send(new DescribeTableCommand({ TableName: table }));
  const sourceArn = described.Table?.RestoreSummary?.SourceTableArn;
  if (sourceArn !== undefined) {
    const source = tableNameOf(sourceArn);
    if (source === fromTable) return { proven: `DynamoDB says '${terminalText(table)}' was restored from it` };
    return { refusal: `'${terminalText(table)}' was restored from '${terminalText(source)}' (DynamoDB's restore summary), not from '${terminalText(fromTable)}': carry from that table` };
  }
  const client = toDocumentClient(context.client());
  const items = await scanItems(client, {
    TableName: table,
    FilterExpression: 'begins_with(#pk, :records) OR (#subscriber = :subscriber AND #type = :fence)',
    ExpressionAttributeNames: { '#pk': TABLE_SCHEMA.PARTITION_KEY, '#subscriber': SEQUENCE_FENCE.SUBSCRIBER_ATTRIBUTE, '#type': SEQUENCE_FENCE.RECORD_TYPE_ATTRIBUTE },
    ExpressionAttributeValues: { ':records': `${subscriber}${INBOX_ITEM.KEY_SEPARATOR}`, ':subscriber': subscriber, ':fence': SEQUENCE_FENCE.RECORD_TYPE_VALUE },
  });
  const prefix = `${subscriber}${INBOX_ITEM.KEY_SEPARATOR}`;
  const eventIds = [
    ...new Set(
      items
        .map((item) => (item[SEQUENCE_FENCE.RECORD_TYPE_ATTRIBUTE] === SEQUENCE_FENCE.RECORD_TYPE_VALUE ? item[SEQUENCE_FENCE.APPLIED_EVENT_ID_ATTRIBUTE] : String(item[TABLE_SCHEMA.PARTITION_KEY]).slice(prefix.length)))
        .filter((eventId): eventId is string => typeof eventId === 'string' && eventId !== ''),
    ),
  ];
  for (const eventId of eventIds.slice(0, MAX_LOOKUPS)) {
    const held = (await client.send(new GetCommand({ TableName: fromTable, Key: { [TABLE_SCHEMA.PARTITION_KEY]: recordKey(subscriber, eventId) }, ConsistentRead: true }))).Item;
    if (held !== undefined) return { proven: `it holds the record of event ${terminalText(eventId)} that '${terminalText(table)}' holds` };
  }
  if (deployedInboxTable === fromTable) return { proven: "the deployment's Operator output (--from-subscriber-output) names it as the subscriber's inbox table" };
  return {
    refusal:
      `${carrySourceRefusalStart(fromTable, table)}: DynamoDB names no restore source, and ${eventIds.length === 0 ? `'${terminalText(table)}' holds no event this subscriber recorded` : `none of the ${Math.min(eventIds.length, MAX_LOOKUPS)} event(s) this subscriber recorded in '${terminalText(table)}' is recorded there`}. ` +
      `Carried from another table (another flow's or environment's inbox with a subscriber of this name), its fences would pass events this subscriber never applied. ` +
      `Give --from-subscriber-output: the subscriber's Operator output of the deployment that used '${terminalText(fromTable)}' (it names it as the inbox table)`,
  };
}
