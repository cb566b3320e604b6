/**
 * What a verify run reads of the deployed flow, without changing it: the run's committed events (the outbox items
 * whose event carries the run id, and the events a subscriber derived from them, transitively), what each subscriber's filter policy takes of them (its deployed subscription's
 * policy, ./subscription-filters.ts, else its Operator output's; matched as the simulator matches it), its queues' message counts, the dead letters in its
 * dead-letter queues with why they are there (read, then made visible again: nothing is deleted; a queue it could not
 * read whole is an error, never "no dead letter": {@link DeadLettersUnreadError}), its inbox records of the run's events
 * (read by their exact keys: which events it applied, and the order an ordered subscriber committed them in), and the
 * scenario's effect probes run against the real tables, an offloaded event with its data fetched and verified
 * (./offloaded-data.ts) (without `sentMessages`: {@link SentMessagesUnavailableError}).
 * The outbox is the one table it scans: the producer chooses its events' ids, so verify cannot name their keys.
 */
import { BatchGetCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { GetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import { DEAD_LETTER_ATTRIBUTE } from '../../lambda/consumer/dead-letter';
import { derivedEventId } from '../../lambda/fingerprint';
import { ORDERED_OUTBOX_ITEM } from '../../lambda/contract/ordered-wire-format';
import { INBOX_ITEM, OUTBOX_ITEM, PROCESSING_RECORD, RECORD_STATUS, recordKey, TABLE_SCHEMA } from '../../lambda/contract/wire-format';
import { eventIdOf } from '../aws/message-ids';
import type { DeadLetterFinding } from '../check/dead-letters';
import { DEFAULT_READ_LIMIT, receiveMessages, releaseMessages, type QueueMessage } from '../../operator/cli/dead-letters/queue-messages';
import type { EffectTally, SimulatedEvent } from '../observation/run-facts';
import { compileFilterPolicy } from '../../operator/patterns/filter-policy';
import { parseEnvelope } from '../run/committed-events';
import type { EffectProbe, SentMessage } from '../run/scenario';
import type { VerifyClients } from './clients';
import { emittedOutboxOf, type DeployedFlow, type DeployedSubscriber } from './deployed-flow';
import { offloadedDataResolver, payloadLocationsOf } from './offloaded-data';
import { isRunEvent } from './run-ids';

/** A committed event of the run, with the body the relay publishes. */
export interface RunEvent {
  readonly event: SimulatedEvent;
  readonly body: string;
  /** Read from an ordered outbox's history (what an ordered subscriber receives). */
  readonly ordered: boolean;
  /** Why an offloaded event's data could not be read (./offloaded-data.ts). @default absent: inline, or read and verified */
  readonly dataUnread?: string;
  /**
   * The outbox table it was committed to: its flow's (or its ordered relay's), whose topic alone delivers it. A
   * subscriber takes only the events of its own flow's outbox ({@link takenEvents}). @default unknown: any subscriber's filter decides
   */
  readonly outboxTable?: string;
}

async function scanAll(clients: VerifyClients, tableName: string): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await clients.documents.send(new ScanCommand({ TableName: tableName, ExclusiveStartKey: startKey, ConsistentRead: true }));
    items.push(...((page.Items ?? []) as Record<string, unknown>[]));
    startKey = page.LastEvaluatedKey;
  } while (startKey !== undefined);
  return items;
}

/** At most this many events are emitted in one transaction (DynamoDB TransactWriteItems takes 100 actions). */
const MAX_EMITTED_PER_EVENT = 100;

/**
 * The run's committed events in every outbox of the flow, by id: those whose id or data carries the run id, and,
 * transitively, those a subscriber of the flow emitted while applying one of them with a runtime-derived id
 * (`derivedEventId(subscriber, consumedEventId, index)`, `tx.emit` without an id): such an event is the run's even when
 * its data names nothing of the run, and its own subscribers must be checked and waited for. One read: see
 * {@link runEventReader} for a run's repeated reads.
 */
export async function readRunEvents(clients: VerifyClients, flow: DeployedFlow, runId: string): Promise<Map<string, RunEvent>> {
  return runEventReader(clients, flow, runId)();
}

/**
 * The outbox tables verify reads the run's events from (review r12, R12-5): each flow's (its `Operator` output), each
 * found subscriber's (its Operator output's `outboxTable`: its flow's, or the outbox of the `OrderedRelay` an ordered
 * subscriber takes from, which has no Operator output of its own), each one a subscriber emits into, and `more` (the
 * producers' own outboxes, from their functions' environment). An outbox not read is a subscriber's events unseen: a
 * subscriber that dead-lettered every one of them would be reported taking none.
 */
export function outboxesRead(flow: Pick<DeployedFlow, 'flows' | 'subscribers'>, more: readonly string[] = []): string[] {
  return [
    ...new Set([
      ...flow.flows.map((item) => item.outboxTable),
      ...flow.subscribers.flatMap((subscriber) => subscriber.deployment.outboxTable ?? []),
      ...flow.subscribers.flatMap((subscriber) => emittedOutboxOf(subscriber) ?? []),
      ...more,
    ]),
  ];
}

/**
 * Reads the run's events ({@link readRunEvents}) from every outbox of {@link outboxesRead} again at each call, scanning
 * each producer's outbox (one no subscriber emits into) only at the first: the producers committed the run's events before verify's first read
 * (a scenario's producer is invoked synchronously), so a full Scan of a large outbox is paid once per run. An outbox a
 * subscriber emits into is scanned at every call: its events come while the run waits.
 */
export function runEventReader(clients: VerifyClients, flow: DeployedFlow, runId: string, producerOutboxes: readonly string[] = []): () => Promise<Map<string, RunEvent>> {
  const emitting = new Set(flow.subscribers.flatMap((subscriber) => emittedOutboxOf(subscriber) ?? []));
  const tables = outboxesRead(flow, producerOutboxes);
  // what a producer's outbox held at the first read, by table
  const once = new Map<string, Record<string, unknown>[]>();
  // an offloaded event's data, fetched once per run, for the probes and `malformed` (./offloaded-data.ts)
  const withData = offloadedDataResolver(clients.payloads, payloadLocationsOf(flow.subscribers.map((subscriber) => subscriber.environment)));
  return async () => {
    const items: { readonly table: string; readonly item: Record<string, unknown> }[] = [];
    for (const table of tables) {
      if (!emitting.has(table) && once.has(table)) {
        items.push(...once.get(table)!.map((item) => ({ table, item })));
        continue;
      }
      const scanned = await scanAll(clients, table);
      if (!emitting.has(table)) once.set(table, scanned);
      items.push(...scanned.map((item) => ({ table, item })));
    }
    const events = runEventsOf(items, flow, runId);
    for (const [id, item] of events) events.set(id, await withData(item));
    return events;
  };
}

/** The run's events among outbox items (see {@link readRunEvents}). */
function runEventsOf(items: readonly { readonly table: string; readonly item: Record<string, unknown> }[], flow: DeployedFlow, runId: string): Map<string, RunEvent> {
  const events = new Map<string, RunEvent>();
  // the outbox events not (yet) known to be the run's, by id: each may derive from one of the run's
  const others = new Map<string, RunEvent>();
  for (const { table, item } of items) {
    const recordType = item[OUTBOX_ITEM.RECORD_TYPE_ATTRIBUTE];
    const body = item[OUTBOX_ITEM.ENVELOPE_ATTRIBUTE];
    const ordered = recordType === ORDERED_OUTBOX_ITEM.HISTORY_RECORD_TYPE_VALUE;
    if (typeof body !== 'string' || (recordType !== OUTBOX_ITEM.RECORD_TYPE_VALUE && !ordered)) continue;
    const event = parseEnvelope(body);
    if (event === undefined) continue;
    (isRunEvent(event, runId) ? events : others).set(event.id, { event, body, ordered, outboxTable: table });
  }
  const subscriberNames = [...new Set(flow.subscribers.map((subscriber) => subscriber.deployment.subscriberName))];
  // the run's events whose derived events are still to be looked for; each found one is looked for in turn
  let frontier = [...events.keys()];
  while (frontier.length > 0 && others.size > 0) {
    const found: string[] = [];
    // index by index, so the common case (one emitted event per consumed one) hashes each pair once
    for (let index = 0; index < MAX_EMITTED_PER_EVENT && others.size > 0; index += 1) {
      for (const consumedId of frontier) {
        for (const subscriberName of subscriberNames) {
          const id = derivedEventId(subscriberName, consumedId, index);
          const derived = others.get(id);
          if (derived === undefined) continue;
          events.set(id, derived);
          others.delete(id);
          found.push(id);
        }
      }
    }
    frontier = found;
  }
  return events;
}

/**
 * The run's events a subscriber's filter policy takes (of the ordered outbox for an ordered subscriber, else the standard
 * one), among those committed to its own flow's outbox (its Operator output's `outboxTable`): another flow's topic
 * delivers nothing to it (review v11, V11-3). A subscriber whose output names no outbox (an imported flow's) is matched
 * against every outbox's events. The filter is its deployed subscription's, when verify read it
 * ({@link DeployedSubscriber.subscriptions}: an event one of them takes; review v11, V11-6), else its Operator output's.
 */
export function takenEvents(subscriber: DeployedSubscriber, events: ReadonlyMap<string, RunEvent>): Set<string> {
  const { filterPolicy, filterPolicyScope, ordered, outboxTable } = subscriber.deployment;
  const filters = (subscriber.subscriptions ?? [{ ...(filterPolicy === undefined ? {} : { filterPolicy }), filterPolicyScope: filterPolicyScope ?? 'MessageAttributes' }]).map((filter) =>
    filter.filterPolicy === undefined ? () => true : compileFilterPolicy(filter.filterPolicy as Record<string, unknown>, filter.filterPolicyScope),
  );
  const ofItsFlow = (item: RunEvent): boolean => outboxTable === undefined || item.outboxTable === undefined || item.outboxTable === outboxTable;
  return new Set(
    [...events.values()].filter((item) => item.ordered === (ordered === true) && ofItsFlow(item) && filters.some((filter) => filter({ body: item.body, attributes: {} }))).map((item) => item.event.id),
  );
}

/** The queues of a subscriber: its queue, then its dead-letter queues (each once). */
export function deadLetterQueuesOf(subscriber: DeployedSubscriber): string[] {
  const { deadLetterQueueUrl, subscriptionDeadLetterQueueUrl } = subscriber.deployment;
  return [...new Set([deadLetterQueueUrl, subscriptionDeadLetterQueueUrl].filter((url): url is string => url !== undefined))];
}

/** Messages on a queue: visible, in flight and delayed. */
export async function messagesOn(clients: VerifyClients, queueUrl: string): Promise<number> {
  const answer = await clients.sqs.send(
    new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible', 'ApproximateNumberOfMessagesDelayed'] }),
  );
  const attributes = answer.Attributes ?? {};
  return ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible', 'ApproximateNumberOfMessagesDelayed'].reduce((sum, name) => sum + Number(attributes[name as keyof typeof attributes] ?? 0), 0);
}

function explain(message: QueueMessage, subscriptionDeadLetterQueue: boolean): { explanation?: string; rejectedWith?: string } {
  const attribute = (name: string): string | undefined => message.messageAttributes[name]?.StringValue;
  const errorName = attribute(DEAD_LETTER_ATTRIBUTE.ERROR_NAME);
  const movedBySqs = message.attributes.DeadLetterQueueSourceArn !== undefined;
  if (errorName !== undefined && !movedBySqs) {
    return { explanation: `${errorName}: ${attribute(DEAD_LETTER_ATTRIBUTE.ERROR_MESSAGE) ?? ''}`, ...(errorName === 'MessageBlockedError' ? {} : { rejectedWith: errorName }) };
  }
  if (movedBySqs) {
    return { explanation: `moved by SQS after maxReceiveCount receives; its last failure is in the consumer function's logs (source queue ${message.attributes.DeadLetterQueueSourceArn})` };
  }
  if (subscriptionDeadLetterQueue) return { explanation: "SNS could not deliver it to the subscription's queue (the topic's delivery status logs say why)" };
  return {};
}

/**
 * Thrown when a dead-letter queue could not be read whole: some of its messages were held in flight by another reader
 * (a concurrent verify run, an operator's `dlq list`: each hides what it reads for 120 s), delayed, or beyond the read
 * limit; or, on a FIFO queue, they wait behind messages of their group this read holds and none of those is the run's
 * (see {@link readDeadLetters}). What was not read may be a dead letter of the run: verify never reads that as "none".
 */
export class DeadLettersUnreadError extends Error {
  public override readonly name = 'DeadLettersUnreadError';

  public constructor(
    public readonly queueUrl: string,
    /** Messages on the queue not read. */
    public readonly unread: number,
    public readonly total: number,
    /** Why they were not read. @default another reader, a delay or the read limit */
    reason = `held in flight by another reader (a concurrent verify run or dlq list hides what it reads for 120 s), delayed, or beyond the read limit of ${DEFAULT_READ_LIMIT}`,
  ) {
    super(`could not read ${unread} of the ${total} message(s) on ${queueUrl}: ${reason}; any of them may be a dead letter of the run`);
  }
}

/** A queue's messages: visible, in flight (received, not deleted) and delayed. */
export interface QueueCounts {
  readonly visible: number;
  readonly inFlight: number;
  readonly delayed: number;
}

/** Messages on a queue: visible, in flight and delayed, each apart. */
export async function countsOn(clients: VerifyClients, queueUrl: string): Promise<QueueCounts> {
  const answer = await clients.sqs.send(
    new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible', 'ApproximateNumberOfMessagesDelayed'] }),
  );
  const attributes = (answer.Attributes ?? {}) as Record<string, string | undefined>;
  return {
    visible: Number(attributes.ApproximateNumberOfMessages ?? 0),
    inFlight: Number(attributes.ApproximateNumberOfMessagesNotVisible ?? 0),
    delayed: Number(attributes.ApproximateNumberOfMessagesDelayed ?? 0),
  };
}

/** What one read of a dead-letter queue received ({@link receiveWhole}). */
export interface DeadLetterRead {
  readonly messages: QueueMessage[];
  /**
   * On a FIFO queue, the messages not received because each waits behind a message of its message group this read
   * holds: SQS returns no message of a group while another of it is in flight, so a group's later messages cannot be
   * received without deleting those before them, and a read that deletes nothing never reaches them. 0 on a standard queue.
   */
  readonly behindHeldGroups: number;
}

/** A FIFO queue's name ends with `.fifo` (SQS requires it). */
function isFifoQueue(queueUrl: string): boolean {
  return queueUrl.endsWith('.fifo');
}

/**
 * Every message of a dead-letter queue, received (hidden) and counted against the queue's own counts while they are
 * hidden: throws {@link DeadLettersUnreadError} when the queue holds more than was received, unless it is a FIFO queue
 * whose unread messages are all visible while every message in flight is this read's (none delayed, the read limit not
 * reached): those wait behind the groups this read holds ({@link DeadLetterRead.behindHeldGroups}). The caller
 * releases the messages.
 */
export async function receiveWhole(clients: VerifyClients, queueUrl: string): Promise<DeadLetterRead> {
  const messages = await receiveMessages(clients.sqs, queueUrl);
  const counts = await countsOn(clients, queueUrl).catch(async (error: unknown) => {
    await releaseMessages(clients.sqs, messages);
    throw error;
  });
  // what this reader received is in flight too: anything above it was not read
  const total = counts.visible + counts.inFlight + counts.delayed;
  if (total <= messages.length) return { messages, behindHeldGroups: 0 };
  // a FIFO queue read until a receive brought nothing new, whose in-flight messages are all this read's: what stays
  // visible is in a group this read holds (any other visible message would have been received)
  if (isFifoQueue(queueUrl) && messages.length > 0 && messages.length < DEFAULT_READ_LIMIT && counts.delayed === 0 && counts.inFlight <= messages.length) {
    return { messages, behindHeldGroups: total - messages.length };
  }
  await releaseMessages(clients.sqs, messages);
  throw new DeadLettersUnreadError(queueUrl, total - messages.length, total);
}

/** The event id a dead letter carries (its runtime attribute, else its body's), if any. */
export function deadLetterEventId(message: QueueMessage): string | undefined {
  return message.messageAttributes[DEAD_LETTER_ATTRIBUTE.EVENT_ID]?.StringValue ?? eventIdOf(message.body);
}

/** Why a run event behind its aggregate's dead letters in a FIFO dead-letter queue was not read. */
export const BEHIND_GROUP_HEAD =
  "not received: it waits behind its aggregate's dead letters read here (a FIFO queue returns no message of a group while another of it is in flight, so a group's later messages cannot be read without deleting those before them); it is read once the dead letters before it are redriven (dlq redrive)";

/**
 * The run's ordered events a FIFO dead-letter queue holds unread behind the groups a read holds ({@link DeadLetterRead}):
 * for each group (aggregate) whose read messages include the run's events, the run's events of that aggregate the
 * subscriber takes, later in sequence than any read there, not read. Undefined when they cannot be told apart: no read
 * message of a held group is the run's (then what waits behind may be any event), or more such events than unread
 * messages (some are elsewhere: on the queue, in the relay). An aggregate's later events reach its dead-letter queue
 * after its earlier ones (one message group: one after another), and a group holding none of the run's events read is
 * taken as not the run's (the run's aggregates carry ids made for the run: ./run-ids.ts).
 */
function runEventsBehind(read: DeadLetterRead, subscriber: DeployedSubscriber, runEvents: ReadonlyMap<string, RunEvent>): string[] | undefined {
  const latestRead = new Map<string, number>();
  const readIds = new Set<string>();
  for (const message of read.messages) {
    const eventId = deadLetterEventId(message);
    const ordering = eventId === undefined ? undefined : runEvents.get(eventId)?.event.ordering;
    if (eventId !== undefined) readIds.add(eventId);
    if (ordering === undefined || message.attributes.MessageGroupId !== ordering.aggregateId) continue;
    latestRead.set(ordering.aggregateId, Math.max(latestRead.get(ordering.aggregateId) ?? 0, ordering.sequence));
  }
  if (latestRead.size === 0) return undefined;
  const behind = [...takenEvents(subscriber, runEvents)].filter((id) => {
    const ordering = runEvents.get(id)!.event.ordering;
    return ordering !== undefined && !readIds.has(id) && ordering.sequence > (latestRead.get(ordering.aggregateId) ?? Infinity);
  });
  return behind.length <= read.behindHeldGroups ? behind.sort() : undefined;
}

/**
 * The dead letters of a subscriber that carry the run's events (matched by exact event id), each explained; the
 * messages are made visible again. Throws {@link DeadLettersUnreadError} when a queue could not be read whole. On an
 * ordered subscriber's FIFO dead-letter queue the run's later events of an aggregate whose dead letters fill a read
 * cannot be received (see {@link DeadLetterRead.behindHeldGroups}): they are found as dead letters not received
 * ({@link BEHIND_GROUP_HEAD}) when every unread message can be one of them, else the queue is not read whole.
 */
export async function readDeadLetters(clients: VerifyClients, subscriber: DeployedSubscriber, runEvents: ReadonlyMap<string, RunEvent>): Promise<DeadLetterFinding[]> {
  const findings: DeadLetterFinding[] = [];
  for (const queueUrl of deadLetterQueuesOf(subscriber)) {
    const read = await receiveWhole(clients, queueUrl);
    const queueName = queueUrl.split('/').pop() ?? queueUrl;
    try {
      for (const message of read.messages) {
        const eventId = deadLetterEventId(message);
        if (eventId === undefined || !runEvents.has(eventId)) continue;
        const subscriptionQueue = queueUrl === subscriber.deployment.subscriptionDeadLetterQueueUrl && queueUrl !== subscriber.deployment.deadLetterQueueUrl;
        findings.push({ queueName, messageId: message.messageId, eventId, ...explain(message, subscriptionQueue) });
      }
      if (read.behindHeldGroups > 0) {
        const behind = runEventsBehind(read, subscriber, runEvents);
        if (behind === undefined) {
          const groups = [...new Set(read.messages.flatMap((message) => message.attributes.MessageGroupId ?? []))].sort();
          throw new DeadLettersUnreadError(
            queueUrl,
            read.behindHeldGroups,
            read.messages.length + read.behindHeldGroups,
            `they wait behind the messages of their FIFO message group(s) (${groups.join(', ')}) this read holds (SQS returns no message of a group while another of it is in flight; reading them needs deleting those before them), and the run's events read there do not account for them`,
          );
        }
        findings.push(...behind.map((eventId) => ({ queueName, messageId: `(not received: behind aggregate ${runEvents.get(eventId)!.event.ordering!.aggregateId}'s dead letters)`, eventId, explanation: BEHIND_GROUP_HEAD })));
      }
    } finally {
      await releaseMessages(clients.sqs, read.messages);
    }
  }
  return findings;
}

/**
 * Thrown when an effect probe reads `sentMessages`: on AWS verify does not see the messages the app sends to queues it
 * does not consume (they really went out), so it cannot count them; an empty list would count every mail 0.
 */
export class SentMessagesUnavailableError extends Error {
  public override readonly name = 'SentMessagesUnavailableError';

  public constructor() {
    super(
      "verify cannot show sentMessages: on a deployed flow the messages the app sends to queues it does not consume are not read (they were really sent), so the probe's count of them is unknown; count the effect in a table the probe reads, or check it with simulate",
    );
  }
}

/** A `sentMessages` that throws {@link SentMessagesUnavailableError} at any use (read, iterated, measured). */
function unavailableSentMessages(): readonly SentMessage[] {
  return new Proxy([] as SentMessage[], {
    get: () => {
      throw new SentMessagesUnavailableError();
    },
    has: () => {
      throw new SentMessagesUnavailableError();
    },
    ownKeys: () => {
      throw new SentMessagesUnavailableError();
    },
  });
}

/** Runs the scenario's effect probe of a subscriber over the events it took; its tallies, or why it threw. */
export async function probeEffects(
  clients: VerifyClients,
  probe: EffectProbe,
  subscriber: DeployedSubscriber,
  taken: ReadonlySet<string>,
  runEvents: ReadonlyMap<string, RunEvent>,
): Promise<{ readonly tallies: readonly EffectTally[] } | { readonly error: string }> {
  try {
    const events = [...taken].flatMap((id) => (runEvents.has(id) ? [runEvents.get(id)!.event] : []));
    return { tallies: await probe({ client: clients.documents, environment: subscriber.environment, events, sentMessages: unavailableSentMessages() }) };
  } catch (error) {
    return { error: error instanceof Error ? error.message : String(error) };
  }
}

/** Keys per BatchGetItem request (DynamoDB's limit). */
const BATCH_GET_KEYS = 100;

/**
 * A subscriber's inbox records of `eventIds`, read by their exact keys (`<subscriber>#<eventId>`: BatchGetItem, strongly
 * consistent): the record of each event that has one. None without an inbox table (aggregate mode keeps none).
 */
export async function inboxRecords(clients: VerifyClients, subscriber: DeployedSubscriber, eventIds: Iterable<string>): Promise<Map<string, Record<string, unknown>>> {
  const table = subscriber.deployment.inboxTable;
  const records = new Map<string, Record<string, unknown>>();
  if (table === undefined) return records;
  // the event of each exact key asked for (the record's own attributes are not trusted to name it)
  const idByKey = new Map([...new Set(eventIds)].map((id) => [recordKey(subscriber.deployment.subscriberName, id), id]));
  const keysAsked = [...idByKey.keys()];
  for (let start = 0; start < keysAsked.length; start += BATCH_GET_KEYS) {
    let keys: Record<string, unknown>[] | undefined = keysAsked.slice(start, start + BATCH_GET_KEYS).map((key) => ({ [TABLE_SCHEMA.PARTITION_KEY]: key }));
    while (keys !== undefined && keys.length > 0) {
      const answer = await clients.documents.send(new BatchGetCommand({ RequestItems: { [table]: { Keys: keys, ConsistentRead: true } } }));
      for (const item of (answer.Responses?.[table] ?? []) as Record<string, unknown>[]) {
        const eventId = idByKey.get(String(item[TABLE_SCHEMA.PARTITION_KEY]));
        if (eventId !== undefined) records.set(eventId, item);
      }
      keys = answer.UnprocessedKeys?.[table]?.Keys as Record<string, unknown>[] | undefined;
    }
  }
  return records;
}

/**
 * The events of `eventIds` the subscriber's inbox shows applied: an inbox record, or a processing record (lease,
 * multi-step) COMPLETED. Undefined when it keeps no inbox (aggregate mode): verify cannot see what it applied.
 */
export async function appliedByInbox(clients: VerifyClients, subscriber: DeployedSubscriber, eventIds: Iterable<string>): Promise<Set<string> | undefined> {
  if (subscriber.deployment.inboxTable === undefined) return undefined;
  const applied = new Set<string>();
  for (const [eventId, item] of await inboxRecords(clients, subscriber, eventIds)) {
    const processing = item[PROCESSING_RECORD.RECORD_TYPE_ATTRIBUTE] === PROCESSING_RECORD.RECORD_TYPE_VALUE;
    if (!processing || item[PROCESSING_RECORD.STATUS_ATTRIBUTE] === RECORD_STATUS.COMPLETED) applied.add(eventId);
  }
  return applied;
}

/**
 * The run's events an ordered subscriber committed, in the order of their inbox records' `processedAt`: a group per
 * instant (the events of one instant are not ordered among themselves). The records are read by their exact keys.
 */
export async function inboxCommitGroups(clients: VerifyClients, subscriber: DeployedSubscriber, taken: ReadonlySet<string>): Promise<string[][]> {
  const byTime = new Map<string, string[]>();
  for (const [eventId, item] of await inboxRecords(clients, subscriber, taken)) {
    const processedAt = item[INBOX_ITEM.PROCESSED_AT_ATTRIBUTE];
    if (typeof processedAt !== 'string') continue;
    byTime.set(processedAt, [...(byTime.get(processedAt) ?? []), eventId]);
  }
  return [...byTime].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, ids]) => ids);
}
