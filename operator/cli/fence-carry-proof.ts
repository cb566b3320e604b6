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
import { readAggregateHistory } from './ordered-history';
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
 * Why the fences `fromTable` holds further than `table` are not this flow's, or undefined when each names an event the
 * subscriber's outbox table (`outboxTable`) holds at that aggregate and sequence: the records `table` shares with
 * `fromTable` prove the past they share, not what `fromTable` applied since (a shadow environment that recorded the one
 * replayed event at the same position applied its own events after it).
 */
async function fenceOutsideOutbox(context: CommandContext, subscriber: string, fromTable: string, restoredFences: ReadonlyArray<Record<string, unknown>>, outboxTable: string | undefined): Promise<string | undefined> {
  const client = toDocumentClient(context.client());
  const standing = new Map(restoredFences.map((item) => [String(item[SEQUENCE_FENCE.AGGREGATE_ATTRIBUTE]), Number(item[SEQUENCE_FENCE.APPLIED_SEQUENCE_ATTRIBUTE])] as const));
  const sourceFences = await scanItems(client, {
    TableName: fromTable,
    FilterExpression: '#subscriber = :subscriber AND #type = :fence',
    ExpressionAttributeNames: { '#subscriber': SEQUENCE_FENCE.SUBSCRIBER_ATTRIBUTE, '#type': SEQUENCE_FENCE.RECORD_TYPE_ATTRIBUTE },
    ExpressionAttributeValues: { ':subscriber': subscriber, ':fence': SEQUENCE_FENCE.RECORD_TYPE_VALUE },
  });
  const further = sourceFences
    .map((item) => ({ aggregateId: String(item[SEQUENCE_FENCE.AGGREGATE_ATTRIBUTE]), sequence: Number(item[SEQUENCE_FENCE.APPLIED_SEQUENCE_ATTRIBUTE]), eventId: item[SEQUENCE_FENCE.APPLIED_EVENT_ID_ATTRIBUTE] }))
    .filter((fence) => fence.sequence > (standing.get(fence.aggregateId) ?? 0))
    .sort((a, b) => a.aggregateId.localeCompare(b.aggregateId));
  if (further.length === 0) return undefined;
  if (outboxTable === undefined) {
    return `its ${further.length} fence(s) further than there name events no outbox table was given to check (--subscriber-output or --outbox-table: the subscriber's outbox table)`;
  }
  for (const fence of further) {
    const history = await readAggregateHistory(context, outboxTable, fence.aggregateId);
    if (typeof fence.eventId === 'string' && history.items.some((item) => item.sequence === fence.sequence && item.eventId === fence.eventId)) continue;
    return (
      `the fence of ${terminalText(fence.aggregateId)} there stands at ${fence.sequence} on ${typeof fence.eventId === 'string' ? `event ${terminalText(fence.eventId)}` : 'no event (a skip moved it)'}, ` +
      `which outbox table '${terminalText(outboxTable)}' does not hold at that sequence (another flow's event, or its history item expired)`
    );
  }
  return undefined;
}

/**
 * Proves `fromTable` is where `table` came from, for `subscriber`: `{ proven }` says by what, `{ refusal }` why not.
 * `deployedInboxTable`: the inbox table the Operator output of the deployment carried from names (`--from-subscriber-output`).
 * `outboxTable`: the subscriber's outbox table (`--outbox-table`, or `--subscriber-output`'s), against which the fences a
 * proof by records would carry forward are checked.
 */
export async function proveCarrySource(context: CommandContext, subscriber: string, fromTable: string, table: string, deployedInboxTable?: string, outboxTable?: string): Promise<{ proven: string } | { refusal: string }> {
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
  // the records prove the past both tables share; what the table carried from applied since must be this flow's events
  // (a shadow environment recording the one replayed event at the same position passed the records alone)
  const unbound = looked.length > 0 && missing === undefined ? await fenceOutsideOutbox(context, subscriber, fromTable, items.filter(isFence), outboxTable) : undefined;
  if (looked.length > 0 && missing === undefined && unbound === undefined) {
    return { proven: `it holds the records of the ${looked.length} live event(s) of this subscriber that '${terminalText(table)}' held when it was created, at the same aggregates and sequences, and each fence it carries forward names an event of the outbox table` };
  }
  if (deployedInboxTable === fromTable) return { proven: "the deployment's Operator output (--from-subscriber-output) names it as the subscriber's inbox table" };
  return {
    refusal:
      `${carrySourceRefusalStart(fromTable, table)}: DynamoDB names no restore source, and ${
        unbound !== undefined
          ? `though it holds the live records '${terminalText(table)}' held when it was created, ${unbound}`
          : missing === undefined
            ? `'${terminalText(table)}' held no live record of an event this subscriber applied when it was created`
            : `event ${terminalText(missing)}, recorded by this subscriber in '${terminalText(table)}', is not recorded there at the same aggregate and sequence`
      }. ` +
      `Carried from another table (another flow's or environment's inbox with a subscriber of this name), its fences would pass events this subscriber never applied. ` +
      `Give --from-subscriber-output: the subscriber's Operator output of the deployment that used '${terminalText(fromTable)}' (it names it as the inbox table), with --subscriber-output: the output of the deployment that uses '${terminalText(table)}'`,
  };
}
