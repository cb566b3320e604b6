/**
 * What an aggregate-mode subscriber's own tables say of the events it applied (`replay --aggregate-table`). It keeps no
 * inbox: each aggregate item holds `aggregateVersion`, counting every application, and `processedMessages`, the ids of
 * the last ones (lambda/contract/wire-format.ts, AGGREGATE_ITEM). An event id in some item's list was applied; an id in
 * no list was never applied IF no item ever forgot one (each version equals its list's length, or the item has no
 * version: nothing applied to it); otherwise an item that forgot ids may have applied it. The tables are the
 * subscriber's (its account's credentials), scanned whole, strongly consistent: the operator names every table the
 * subscriber's `locate` writes, or an event applied in a table left out is taken as never applied.
 */
import { DescribeTableCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
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
}

/** Reads `tables` (each whole). */
export async function readAggregateApplications(client: DynamoDBClient, tables: readonly string[]): Promise<AggregateApplications> {
  const appliedBy = new Map<string, string>();
  const forgetful: ForgetfulAggregate[] = [];
  const documents = toDocumentClient(client);
  for (const table of tables) {
    const keyNames = ((await client.send(new DescribeTableCommand({ TableName: table }))).Table?.KeySchema ?? []).map((key) => key.AttributeName!);
    for (const item of await scanItems(documents, { TableName: table })) {
      const version = item[AGGREGATE_ITEM.VERSION_ATTRIBUTE];
      if (typeof version !== 'number') continue; // nothing applied to it (or not an aggregate of the runtime)
      const aggregate = `${table} ${keyNames.map((name) => `${name}=${String(item[name])}`).join(' ')}`;
      const processed = parseProcessedMessages(item[AGGREGATE_ITEM.PROCESSED_MESSAGES_ATTRIBUTE]);
      for (const message of processed) if (!appliedBy.has(message.id)) appliedBy.set(message.id, aggregate);
      if (version > processed.length) forgetful.push({ aggregate, forgot: version - processed.length });
    }
  }
  return { appliedBy, forgetful };
}

/**
 * The decision for one event of an aggregate-mode subscriber from `applications`: applied (not sent), never applied
 * (sent), or unknown (the reason it is refused).
 */
export function aggregateDecision(applications: AggregateApplications, eventId: string, subscriberName: string): { applied: string } | { neverApplied: true } | { unknown: string } {
  const applied = applications.appliedBy.get(eventId);
  if (applied !== undefined) return { applied: `subscriber '${subscriberName}' applied it: aggregate ${applied} remembers its id (a copy would be dropped as a duplicate while it does); not sent` };
  if (applications.forgetful.length === 0) return { neverApplied: true };
  const shown = applications.forgetful.slice(0, 3).map((item) => `${item.aggregate} forgot ${item.forgot}`).join(', ');
  return {
    unknown:
      `subscriber '${subscriberName}' is in aggregate mode and no aggregate of the tables given remembers the event, but ${applications.forgetful.length} aggregate(s) forgot ids ` +
      `(${shown}${applications.forgetful.length > 3 ? ', ...' : ''}): one of them may have applied it, and a copy would be applied again; ` +
      '--allow-reapply sends it anyway (when you know no copy of it was applied)',
  };
}
