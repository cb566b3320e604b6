/**
 * What an aggregate-mode subscriber's own tables say of the events it applied (`replay --aggregate-table`). It keeps no
 * inbox: each aggregate item holds `aggregateVersion`, counting every application, and `processedMessages`, the ids of
 * the last ones (lambda/contract/wire-format.ts, AGGREGATE_ITEM). An event id in some item's list was applied; an id in
 * no list was never applied IF no item ever forgot one (each version equals its list's length, or the item has no
 * version: nothing applied to it); otherwise an item that forgot ids may have applied it. The tables are the
 * subscriber's (its account's credentials), scanned whole, strongly consistent: the operator names every table the
 * subscriber's `locate` writes, or an event applied in a table left out is taken as never applied. Only the items that
 * are the subscriber's count: each names its subscriber (`aggregateSubscriber`, written with every version); an item
 * naming another subscriber (a table shared by several) is left out, and an id found only in an item naming none
 * (written before the runtime marked items) cannot be credited to the subscriber: undecided. A table given that holds
 * no aggregate of the subscriber (empty, another table of the flow, other subscribers' aggregates only) is refused,
 * naming it and why: every event found nowhere would otherwise be taken as never applied, and sent.
 */
import { DescribeTableCommand, type DescribeTableCommandOutput, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { toDocumentClient } from '../../lambda/transaction/document-client';
import { AGGREGATE_ITEM } from '../../lambda/contract/wire-format';
import { parseProcessedMessages } from '../../lambda/aggregate/processed-messages';
import { scanItems } from './scan-items';

/** An aggregate that forgot ids: more applications than its list holds. */
export interface ForgetfulAggregate {
  /** `<table> <key attribute>=<value>...` */
  readonly aggregate: string;
  readonly forgot: number;
}

/** What the tables say. */
export interface AggregateApplications {
  /** The aggregate (`<table> <key>`) whose list holds each applied event id. */
  readonly appliedBy: ReadonlyMap<string, string>;
  /** The aggregates that forgot ids, in scan order. */
  readonly forgetful: readonly ForgetfulAggregate[];
  /** The aggregate naming no subscriber whose list holds each event id no item of the subscriber holds. */
  readonly unmarkedBy: ReadonlyMap<string, string>;
  /** How many items naming another subscriber were left out. */
  readonly othersLeftOut: number;
}

/** Reads `tables` (each whole), counting the items of `subscriberName` and those naming no subscriber. */
export async function readAggregateApplications(client: DynamoDBClient, tables: readonly string[], subscriberName: string): Promise<AggregateApplications> {
  const appliedBy = new Map<string, string>();
  const unmarkedBy = new Map<string, string>();
  const forgetful: ForgetfulAggregate[] = [];
  let othersLeftOut = 0;
  const documents = toDocumentClient(client);
  for (const table of tables) {
    const keyNames = ((await describeAggregateTable(client, table)).Table?.KeySchema ?? []).map((key) => key.AttributeName!);
    const items = await scanItems(documents, { TableName: table });
    const others = new Set<string>();
    let its = 0;
    for (const item of items) {
      const version = item[AGGREGATE_ITEM.VERSION_ATTRIBUTE];
      if (typeof version !== 'number') continue; // nothing applied to it (or not an aggregate of the runtime)
      const owner = item[AGGREGATE_ITEM.SUBSCRIBER_ATTRIBUTE];
      if (owner !== undefined && owner !== subscriberName) {
        others.add(String(owner));
        othersLeftOut += 1; // another subscriber's: its ids and its forgetting say nothing of this one
        continue;
      }
      its += 1;
      const aggregate = `${table} ${keyNames.map((name) => `${name}=${String(item[name])}`).join(' ')}`;
      const processed = parseProcessedMessages(item[AGGREGATE_ITEM.PROCESSED_MESSAGES_ATTRIBUTE]);
      const found = owner === undefined ? unmarkedBy : appliedBy;
      for (const message of processed) if (!found.has(message.id)) found.set(message.id, aggregate);
      // an unmarked item may be this subscriber's: its forgetting counts (the safe side)
      if (version > processed.length) forgetful.push({ aggregate, forgot: version - processed.length });
    }
    if (its === 0) throw new Error(notAggregateTable(table, subscriberName, items.length, [...others].sort()));
  }
  return { appliedBy, forgetful, unmarkedBy, othersLeftOut };
}

/**
 * Why `table` (`itemCount` items, aggregates of `others` only) is refused as an aggregate table of `subscriberName`: no
 * item of it is an aggregate the runtime wrote for the subscriber, so an event found in none of them would be taken as
 * never applied and sent, though the subscriber may have applied it in a table left out.
 */
export function notAggregateTable(table: string, subscriberName: string, itemCount: number, others: readonly string[]): string {
  const why =
    itemCount === 0
      ? 'it is empty'
      : others.length > 0
        ? `its aggregates name other subscribers only (${others.map((name) => `'${name}'`).join(', ')}; ${AGGREGATE_ITEM.SUBSCRIBER_ATTRIBUTE})`
        : `none of its ${itemCount} item(s) is an aggregate (no ${AGGREGATE_ITEM.VERSION_ATTRIBUTE})`;
  return (
    `--aggregate-table ${table}: not an aggregate table of subscriber '${subscriberName}': ${why}, so it cannot say which events the subscriber applied; ` +
    "give the tables the subscriber's locate writes (one it never applied an event to says nothing: leave it out, and if no table remains, --allow-reapply without --aggregate-table)"
  );
}

/** DescribeTable of an `--aggregate-table`; one that does not exist fails naming it (DynamoDB's answer may not). */
async function describeAggregateTable(client: DynamoDBClient, table: string): Promise<DescribeTableCommandOutput> {
  try {
    return await client.send(new DescribeTableCommand({ TableName: table }));
  } catch (error) {
    if ((error as Error).name !== 'ResourceNotFoundException') throw error;
    throw new Error(`--aggregate-table ${table}: no such table with your credentials (their account and Region); give every table the subscriber's locate writes`);
  }
}

/**
 * The decision for one event of an aggregate-mode subscriber from `applications`: applied (not sent), never applied
 * (sent), or unknown (the reason it is refused).
 */
export function aggregateDecision(applications: AggregateApplications, eventId: string, subscriberName: string): { applied: string } | { neverApplied: true } | { unknown: string } {
  const applied = applications.appliedBy.get(eventId);
  if (applied !== undefined) return { applied: `subscriber '${subscriberName}' applied it: aggregate ${applied} (marked ${AGGREGATE_ITEM.SUBSCRIBER_ATTRIBUTE} '${subscriberName}') remembers its id (a copy would be dropped as a duplicate while it does); not sent` };
  const unmarked = applications.unmarkedBy.get(eventId);
  if (unmarked !== undefined) {
    return {
      unknown:
        `aggregate ${unmarked} remembers the event but names no subscriber (${AGGREGATE_ITEM.SUBSCRIBER_ATTRIBUTE}: written before the runtime marked its items), ` +
        `so it may be another subscriber's (a table several subscribers share) and cannot prove '${subscriberName}' applied it; ` +
        '--allow-reapply sends it (if that aggregate is the subscriber\'s and still remembers the id, the copy is dropped as a duplicate)',
    };
  }
  if (applications.forgetful.length === 0) return { neverApplied: true };
  const shown = applications.forgetful.slice(0, 3).map((item) => `${item.aggregate} forgot ${item.forgot}`).join(', ');
  return {
    unknown:
      `subscriber '${subscriberName}' is in aggregate mode and no aggregate of the tables given remembers the event, but ${applications.forgetful.length} aggregate(s) forgot ids ` +
      `(${shown}${applications.forgetful.length > 3 ? ', ...' : ''}): one of them may have applied it, and a copy would be applied again; ` +
      '--allow-reapply sends it anyway (when you know no copy of it was applied)',
  };
}
