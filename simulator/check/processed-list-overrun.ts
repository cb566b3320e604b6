/**
 * Whether an aggregate consumer's event applied again was let through by its aggregate's bounded processed list: the
 * runtime remembers the newest `maxProcessedMessages` event ids per aggregate (lambda/aggregate/processed-messages.ts),
 * so a redelivery that comes after that many newer events of the aggregate were applied is no longer recognised and is
 * applied again, as aggregate mode documents (docs/PROCESSING-MODES.md). The bound is set in the handler's code, not in
 * the app's assembly: it is read from the lists the runtime wrote, which hold exactly that many ids once they drop one.
 * Told only when the commits show it: a commit between the two applications dropped the event, its list the longest
 * the aggregate's commits wrote, and at least that many newer events were applied in between.
 */
import { parseProcessedMessages } from '../../lambda/aggregate/processed-messages';
import { AGGREGATE_ITEM } from '../../lambda/contract/wire-format';

/** The setting, as createAggregateConsumer's options spell it. */
export const PROCESSED_LIST_SETTING = 'maxProcessedMessages';

/** What the commits of an aggregate show of a list that forgot an event. */
export interface ProcessedListOverrun {
  /** How many ids the list keeps (`maxProcessedMessages`), as the runtime wrote it. */
  readonly bound: number;
  /** The events the commits between the two applications applied (each commit's newest entry), oldest first. */
  readonly newer: readonly string[];
}

/** The event ids of the processed list an aggregate commit's request body writes, oldest first; undefined when it writes none. */
export function processedListOf(body: string): string[] | undefined {
  let request: { Item?: Record<string, unknown>; TransactItems?: { Put?: { Item?: Record<string, unknown> } }[] };
  try {
    request = JSON.parse(body) as typeof request;
  } catch {
    return undefined;
  }
  // the aggregate's Put comes first in a transaction with its emitted events
  const item = request.Item ?? request.TransactItems?.[0]?.Put?.Item;
  const list = (item?.[AGGREGATE_ITEM.PROCESSED_MESSAGES_ATTRIBUTE] as { L?: { S?: unknown }[] } | undefined)?.L;
  if (!Array.isArray(list)) return undefined;
  return parseProcessedMessages(list.map((entry) => entry.S)).map((message) => message.id);
}

/**
 * The overrun that let `eventId` be applied again: `bodies` are the applied commits of one aggregate item in the order
 * DynamoDB applied them, `from` the commit that added the event, `to` the one that added it again. Undefined when the
 * commits do not show the list forgetting it at its bound (see the module comment).
 */
export function processedListOverrun(bodies: readonly string[], from: number, to: number, eventId: string): ProcessedListOverrun | undefined {
  if (from < 0 || to <= from + 1 || to >= bodies.length) return undefined;
  const lists = bodies.slice(0, to + 1).map(processedListOf);
  const between = lists.slice(from + 1, to);
  const dropping = between.find((list) => list !== undefined && !list.includes(eventId));
  if (dropping === undefined || dropping.length === 0) return undefined;
  const bound = dropping.length;
  // a longer list of the same aggregate: the list did not drop the event at its bound (another writer, another setting)
  if (lists.some((list) => list !== undefined && list.length > bound)) return undefined;
  if (between.length < bound) return undefined;
  return { bound, newer: between.flatMap((list) => (list === undefined || list.length === 0 ? [] : [list.at(-1)!])) };
}

/** The overrun in words, after `applied again by …`: the aggregate, the newer events, the bound. */
export function processedListOverrunText(overrun: ProcessedListOverrun, aggregate: string, firstApplied: string): string {
  return (
    `aggregate ${aggregate} had forgotten it: ${overrun.newer.length} newer events of the aggregate were applied after ${firstApplied} applied it, ` +
    `and its processed list keeps the newest ${overrun.bound} (${PROCESSED_LIST_SETTING} ${overrun.bound}, read from the lists the runtime wrote), ` +
    'so the redelivery was not recognised (the bound aggregate mode documents)'
  );
}
