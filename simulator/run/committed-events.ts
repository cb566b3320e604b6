/**
 * What the outboxes hold at the end of a run: each relay's source table is scanned, and every item is put through the
 * pipe's own filter and input template as the INSERT stream record it was, so "committed events" means exactly what the
 * deployed pipe would relay. Each rendered message is known by its event id (what the topic and the queues follow);
 * one with none is untracked, which the checks report, since none of its deliveries could be followed. The messages
 * that parse as envelopes are what the effect probes receive. An offloaded event's envelope (issue 42: a `dataref`, no
 * `data`) gets its `data` back from the run's S3 when the object is there and matches the envelope's digest and size,
 * so the checks and probes see the event as its handlers do: inline-looking.
 */
import { createHash } from 'node:crypto';
import { ScanCommand, type AttributeValue, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { CLAIM_CHECK_ATTRIBUTES, parseDataRef } from '../../lambda/contract/claim-check';
import { envelopeObjectOf, eventIdOf } from '../aws/message-ids';
import { ORDERED_OUTBOX_ITEM } from '../../lambda/contract/ordered-wire-format';
import { OUTBOX_ITEM } from '../../lambda/contract/wire-format';
import type { FlowModel } from '../model/flow-model';
import { compilePipeFilterCriteria } from '../../operator/patterns/event-pattern';
import { compileInputTemplate } from '../../operator/patterns/input-template';
import type { LocalFlow } from './build-flow';
import type { SimulatedEvent } from '../observation/run-facts';
import type { UntrackedItem } from '../observation/run-facts';

/** The committed events of every relay, every envelope by id, and the items whose messages carry no id. */
export interface CommittedOutbox {
  readonly eventIdsByRelay: ReadonlyMap<string, readonly string[]>;
  readonly eventsById: ReadonlyMap<string, SimulatedEvent>;
  /** The message the relay publishes for each event (its rendered input template), by id: what a filter policy reads. */
  readonly messagesById: ReadonlyMap<string, string>;
  /** The committed events whose data is in the payload bucket: their message carries a `dataref` (claim-check). */
  readonly offloadedEventIds: ReadonlySet<string>;
  readonly untracked: readonly UntrackedItem[];
}

/** Parses a relayed message as an envelope (raw JSON, or a JSON string holding it); undefined if it is not one. */
export function parseEnvelope(message: string): SimulatedEvent | undefined {
  const candidate = envelopeObjectOf(message);
  if (candidate === undefined || typeof candidate.id !== 'string' || typeof candidate.type !== 'string') return undefined;
  const sequence = typeof candidate.sequence === 'string' && /^\d+$/.test(candidate.sequence) ? Number(candidate.sequence) : undefined;
  return {
    id: candidate.id,
    type: candidate.type,
    subject: typeof candidate.subject === 'string' ? candidate.subject : undefined,
    data: candidate.data,
    ...(typeof candidate.partitionkey === 'string' && sequence !== undefined ? { ordering: { aggregateId: candidate.partitionkey, sequence } } : {}),
  };
}

/** A key attribute's value without its type tag (`{ S: 'a' }` → `'a'`). */
function plainValue(value: AttributeValue | undefined): unknown {
  return value === undefined ? undefined : Object.values(value)[0];
}

async function scanAll(client: DynamoDBClient, tableName: string): Promise<Record<string, AttributeValue>[]> {
  const items: Record<string, AttributeValue>[] = [];
  let startKey: Record<string, AttributeValue> | undefined;
  do {
    const page = await client.send(new ScanCommand({ TableName: tableName, ExclusiveStartKey: startKey, ConsistentRead: true }));
    items.push(...(page.Items ?? []));
    startKey = page.LastEvaluatedKey;
  } while (startKey !== undefined);
  return items;
}

/**
 * The image of an outbox item as the stream carried it when its event was committed. An ordered event's head item
 * (`OrderedOutbox`) is rewritten by the aggregate's next event, so at the end of a run only the last one is in the
 * table; its history item (one per event) is the head as that event wrote it, but for the key and the record type:
 * each history item stands for its head write, and the heads themselves are left out (undefined), so each ordered event
 * is counted once.
 */
function asRelayedImage(item: Record<string, AttributeValue>): Record<string, AttributeValue> | undefined {
  const recordType = item[OUTBOX_ITEM.RECORD_TYPE_ATTRIBUTE]?.S;
  // a carried head (an operator's `outbox heads`) holds a sequence, no event
  if (recordType === ORDERED_OUTBOX_ITEM.HEAD_RECORD_TYPE_VALUE || recordType === ORDERED_OUTBOX_ITEM.CARRIED_HEAD_RECORD_TYPE_VALUE) return undefined;
  if (recordType === ORDERED_OUTBOX_ITEM.HISTORY_RECORD_TYPE_VALUE) return { ...item, [OUTBOX_ITEM.RECORD_TYPE_ATTRIBUTE]: { S: ORDERED_OUTBOX_ITEM.HEAD_RECORD_TYPE_VALUE } };
  return item;
}

/**
 * The event with the `data` of its claim-check object (lambda/contract/claim-check.ts), when its envelope has a
 * `dataref` and no `data`, and the object is there with the digest and size the envelope names; else as it is.
 */
export async function withOffloadedData(event: SimulatedEvent, message: string, s3: LocalFlow['s3']): Promise<SimulatedEvent> {
  if (event.data !== undefined || s3 === undefined) return event;
  const envelope = envelopeObjectOf(message);
  const dataref = envelope?.[CLAIM_CHECK_ATTRIBUTES.DATAREF];
  const location = typeof dataref === 'string' ? parseDataRef(dataref) : undefined;
  if (location === undefined) return event;
  const body = await s3.readObject(location.bucketName, location.key);
  if (body === undefined || body.length !== envelope?.[CLAIM_CHECK_ATTRIBUTES.SIZE]) return event;
  if (createHash('sha256').update(body).digest('hex') !== envelope[CLAIM_CHECK_ATTRIBUTES.SHA256]) return event;
  try {
    return { ...event, data: JSON.parse(body.toString('utf8')) as unknown };
  } catch {
    return event;
  }
}

/** Reads the committed events of every relay of the flow. */
export async function readCommittedOutbox(model: FlowModel, flow: LocalFlow, client: DynamoDBClient): Promise<CommittedOutbox> {
  const eventIdsByRelay = new Map<string, string[]>();
  const eventsById = new Map<string, SimulatedEvent>();
  const messagesById = new Map<string, string>();
  const offloadedEventIds = new Set<string>();
  const untracked: UntrackedItem[] = [];
  for (const relay of model.relays) {
    const table = flow.tables.get(relay.sourceTable);
    const tableModel = model.tables.find((candidate) => candidate.key === relay.sourceTable);
    if (table === undefined || tableModel === undefined) continue;
    const passes = compilePipeFilterCriteria(relay.filterPatterns);
    const render = compileInputTemplate(relay.inputTemplate);
    const keyNames = tableModel.keySchema.map((key) => key.AttributeName);
    const ids: string[] = [];
    for (const scanned of await scanAll(client, table.tableName)) {
      const item = asRelayedImage(scanned);
      if (item === undefined) continue;
      const record = {
        eventName: 'INSERT',
        eventSource: 'aws:dynamodb',
        eventSourceARN: table.streamArn,
        dynamodb: { Keys: Object.fromEntries(keyNames.map((name) => [name, item[name]])), NewImage: item, StreamViewType: tableModel.streamViewType },
      };
      if (!passes(record)) continue;
      const message = render(record);
      // the id the topic and the queues follow a message by (a type is not needed for that)
      const id = eventIdOf(message);
      if (id === undefined) {
        untracked.push({ relay: relay.key, item: JSON.stringify(Object.fromEntries(keyNames.map((name) => [name, plainValue(item[name])]))) });
        continue;
      }
      ids.push(id);
      messagesById.set(id, message);
      if (typeof envelopeObjectOf(message)?.[CLAIM_CHECK_ATTRIBUTES.DATAREF] === 'string') offloadedEventIds.add(id);
      const event = parseEnvelope(message);
      if (event !== undefined) eventsById.set(id, await withOffloadedData(event, message, flow.s3));
    }
    eventIdsByRelay.set(relay.key, ids);
  }
  return { eventIdsByRelay, eventsById, messagesById, offloadedEventIds, untracked };
}
