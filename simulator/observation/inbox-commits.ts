/**
 * Which events a DynamoDB request DynamoDB applied committed as handled: the inbox records it wrote (lambda/contract
 * wire format: an item keyed `<subscriber>#<event id>` with the event id and subscriber attributes, and no record type:
 * a lease or multi-step processing record is a claim, not an application). A consumer of the runtime writes an event's
 * inbox record in the transaction of its business writes, so the order of these commits is the order in which the
 * consumer applied its events, inside one invocation too.
 */
import { INBOX_ITEM, PROCESSING_RECORD, recordKey, TABLE_SCHEMA } from '../../lambda/contract/wire-format';

type AttributeMap = Readonly<Record<string, { readonly S?: string } | undefined>>;

/** The event id of an inbox record, or undefined for any other item. */
function inboxEventIdOf(item: AttributeMap | undefined): string | undefined {
  if (item === undefined || item[PROCESSING_RECORD.RECORD_TYPE_ATTRIBUTE] !== undefined) return undefined;
  const eventId = item[INBOX_ITEM.EVENT_ID_ATTRIBUTE]?.S;
  const subscriber = item[INBOX_ITEM.SUBSCRIBER_ATTRIBUTE]?.S;
  if (eventId === undefined || subscriber === undefined) return undefined;
  return item[TABLE_SCHEMA.PARTITION_KEY]?.S === recordKey(subscriber, eventId) ? eventId : undefined;
}

/** The event ids whose inbox records an applied `PutItem` or `TransactWriteItems` wrote, in the request's order. */
export function committedInboxEvents(operation: string, body: Buffer): string[] {
  if (operation !== 'PutItem' && operation !== 'TransactWriteItems') return [];
  let request: { readonly Item?: AttributeMap; readonly TransactItems?: readonly { readonly Put?: { readonly Item?: AttributeMap } }[] };
  try {
    request = JSON.parse(body.toString('utf8')) as typeof request;
  } catch {
    return [];
  }
  const items = operation === 'PutItem' ? [request.Item] : (request.TransactItems ?? []).map((action) => action.Put?.Item);
  return items.flatMap((item) => {
    const eventId = inboxEventIdOf(item);
    return eventId === undefined ? [] : [eventId];
  });
}
