/**
 * What proves the table `fence carry` carries from is the one the subscriber's inbox table was restored from, or the
 * one it replaced (review ro13, RO13-5). Subscriber names (`Billing`) and aggregate ids (`order-42`) repeat across flows
 * and environments: carried from another flow's inbox, this subscriber's fences would pass events it never applied.
 * Proven by DynamoDB's restore summary of the restored table (the table it was restored from, by its whole ARN), else by the
 * subscriber's live inbox records the restored table held when it was created (up to 50 looked up), every one recorded in the table carried from at the same aggregate and sequence
 * (one event in common, replayed into another environment, proves nothing), else by the Operator output of the
 * deployment that used the table carried from (`--from-subscriber-output`), which fence-command.ts compares with the
 * output of the deployment that uses the restored table (same outbox table, account and Region). Reads only: DescribeTable, Scan, GetItem.
 */
import { DescribeTableCommand } from '@aws-sdk/client-dynamodb';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { ORDERED_INBOX_ITEM, SEQUENCE_FENCE } from '../../lambda/contract/ordered-wire-format';
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

/**
 * The ARN of `table` as DynamoDB names it (`arn:aws:dynamodb:<region>:<account>:table/<name>`), in the operator's account
 * and Region; undefined when there is no such table.
 */
async function tableArnOf(context: CommandContext, table: string): Promise<string | undefined> {
  try {
    return (await context.client().send(new DescribeTableCommand({ TableName: table }))).Table?.TableArn;
  } catch (error) {
    if ((error as Error).name === 'ResourceNotFoundException') return undefined;
    throw error;
  }
}

/**
 * Proves `fromTable` is where `table` came from, for `subscriber`: `{ proven }` says by what, `{ refusal }` why not.
 * `deployedInboxTable`: the inbox table the Operator output of the deployment carried from names (`--from-subscriber-output`).
 */
export async function proveCarrySource(context: CommandContext, subscriber: string, fromTable: string, table: string, deployedInboxTable?: string): Promise<{ proven: string } | { refusal: string }> {
  const described = await context.client().send(new DescribeTableCommand({ TableName: table }));
  const sourceArn = described.Table?.RestoreSummary?.SourceTableArn;
  if (sourceArn !== undefined) {
    // the whole ARN: a table of the same name in another Region or account is another table (review ro14, RO14-5)
    const fromArn = await tableArnOf(context, fromTable);
    if (fromArn === sourceArn) return { proven: `DynamoDB says '${terminalText(table)}' was restored from it (${terminalText(fromArn)})` };
    return {
      refusal:
        `'${terminalText(table)}' was restored from ${terminalText(sourceArn)} (DynamoDB's restore summary), not from '${terminalText(fromTable)}' (${fromArn === undefined ? 'no such table here' : terminalText(fromArn)}): ` +
        'carry from that table (in its account and Region)',
    };
  }
  const client = toDocumentClient(context.client());
  const items = await scanItems(client, {
    TableName: table,
    FilterExpression: 'begins_with(#pk, :records) OR (#subscriber = :subscriber AND #type = :fence)',
    ExpressionAttributeNames: { '#pk': TABLE_SCHEMA.PARTITION_KEY, '#subscriber': SEQUENCE_FENCE.SUBSCRIBER_ATTRIBUTE, '#type': SEQUENCE_FENCE.RECORD_TYPE_ATTRIBUTE },
    ExpressionAttributeValues: { ':records': `${subscriber}${INBOX_ITEM.KEY_SEPARATOR}`, ':subscriber': subscriber, ':fence': SEQUENCE_FENCE.RECORD_TYPE_VALUE },
  });
  const prefix = `${subscriber}${INBOX_ITEM.KEY_SEPARATOR}`;
  const isFence = (item: Record<string, unknown>): boolean => item[SEQUENCE_FENCE.RECORD_TYPE_ATTRIBUTE] === SEQUENCE_FENCE.RECORD_TYPE_VALUE;
  // the subscriber's inbox records of the restored table written before it was created (what the restore brought) and
  // still live (not past their time to live): every one looked up is recorded there too, at the same aggregate and
  // sequence; one event in common (replayed into another environment) proves nothing of the rest (review ro14, RO14-2)
  const nowSeconds = context.now().getTime() / 1000;
  const createdAt = described.Table?.CreationDateTime?.getTime() ?? Number.POSITIVE_INFINITY;
  const records = items.filter(
    (item) =>
      !isFence(item) &&
      String(item[TABLE_SCHEMA.PARTITION_KEY]).startsWith(prefix) &&
      !(Number(item[TABLE_SCHEMA.TIME_TO_LIVE_ATTRIBUTE]) <= nowSeconds) &&
      Date.parse(String(item[INBOX_ITEM.PROCESSED_AT_ATTRIBUTE])) < createdAt,
  );
  const looked = records.slice(0, MAX_LOOKUPS);
  let missing: string | undefined;
  for (const record of looked) {
    const eventId = String(record[TABLE_SCHEMA.PARTITION_KEY]).slice(prefix.length);
    const held = (await client.send(new GetCommand({ TableName: fromTable, Key: { [TABLE_SCHEMA.PARTITION_KEY]: recordKey(subscriber, eventId) }, ConsistentRead: true }))).Item;
    const samePosition = held !== undefined && [ORDERED_INBOX_ITEM.AGGREGATE_ATTRIBUTE, ORDERED_INBOX_ITEM.SEQUENCE_ATTRIBUTE].every((name) => String(held[name]) === String(record[name]));
    if (!samePosition) {
      missing = eventId;
      break;
    }
  }
  if (looked.length > 0 && missing === undefined) return { proven: `it holds the records of the ${looked.length} live event(s) of this subscriber that '${terminalText(table)}' held when it was created, at the same aggregates and sequences` };
  if (deployedInboxTable === fromTable) return { proven: "the deployment's Operator output (--from-subscriber-output) names it as the subscriber's inbox table" };
  return {
    refusal:
      `${carrySourceRefusalStart(fromTable, table)}: DynamoDB names no restore source, and ${missing === undefined ? `'${terminalText(table)}' held no live record of an event this subscriber applied when it was created` : `event ${terminalText(missing)}, recorded by this subscriber in '${terminalText(table)}', is not recorded there at the same aggregate and sequence`}. ` +
      `Carried from another table (another flow's or environment's inbox with a subscriber of this name), its fences would pass events this subscriber never applied. ` +
      `Give --from-subscriber-output: the subscriber's Operator output of the deployment that used '${terminalText(fromTable)}' (it names it as the inbox table), with --subscriber-output: the output of the deployment that uses '${terminalText(table)}'`,
  };
}
