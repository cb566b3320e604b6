/**
 * What a verify run reads of the deployed flow, without changing it: the run's committed events (the outbox items
 * whose event carries the run id), what each subscriber's filter policy takes of them (the subscription's policy from
 * its Operator output, matched as the simulator matches it), its queues' message counts, the dead letters in its
 * dead-letter queues with why they are there (read, then made visible again: nothing is deleted), the order its inbox
 * records were committed in (ordered subscribers), and the scenario's effect probes run against the real tables.
 */
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { GetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import { DEAD_LETTER_ATTRIBUTE } from '../../lambda/consumer/dead-letter';
import { ORDERED_OUTBOX_ITEM } from '../../lambda/contract/ordered-wire-format';
import { INBOX_ITEM, OUTBOX_ITEM } from '../../lambda/contract/wire-format';
import { eventIdOf } from '../aws/message-ids';
import type { DeadLetterFinding } from '../check/dead-letters';
import { receiveMessages, releaseMessages, type QueueMessage } from '../cli/dead-letters/queue-messages';
import type { EffectTally, SimulatedEvent } from '../observation/run-facts';
import { compileFilterPolicy } from '../patterns/filter-policy';
import { parseEnvelope } from '../run/committed-events';
import type { EffectProbe } from '../run/scenario';
import type { VerifyClients } from './clients';
import type { DeployedFlow, DeployedSubscriber } from './deployed-flow';
import { isRunEvent } from './run-ids';

/** A committed event of the run, with the body the relay publishes. */
export interface RunEvent {
  readonly event: SimulatedEvent;
  readonly body: string;
  /** Read from an ordered outbox's history (what an ordered subscriber receives). */
  readonly ordered: boolean;
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

/** The run's committed events in every outbox of the flow, by id. */
export async function readRunEvents(clients: VerifyClients, flow: DeployedFlow, runId: string): Promise<Map<string, RunEvent>> {
  const tables = new Set([...flow.flows.map((item) => item.outboxTable), ...flow.subscribers.flatMap((subscriber) => (subscriber.deployment.outboxTable === undefined ? [] : [subscriber.deployment.outboxTable]))]);
  const events = new Map<string, RunEvent>();
  for (const table of tables) {
    for (const item of await scanAll(clients, table)) {
      const recordType = item[OUTBOX_ITEM.RECORD_TYPE_ATTRIBUTE];
      const body = item[OUTBOX_ITEM.ENVELOPE_ATTRIBUTE];
      const ordered = recordType === ORDERED_OUTBOX_ITEM.HISTORY_RECORD_TYPE_VALUE;
      if (typeof body !== 'string' || (recordType !== OUTBOX_ITEM.RECORD_TYPE_VALUE && !ordered)) continue;
      const event = parseEnvelope(body);
      if (event === undefined || !isRunEvent(event, runId)) continue;
      events.set(event.id, { event, body, ordered });
    }
  }
  return events;
}

/** The run's events a subscriber's filter policy takes (of the ordered outbox for an ordered subscriber, else the standard one). */
export function takenEvents(subscriber: DeployedSubscriber, events: ReadonlyMap<string, RunEvent>): Set<string> {
  const { filterPolicy, filterPolicyScope, ordered } = subscriber.deployment;
  const filter = filterPolicy === undefined ? undefined : compileFilterPolicy(filterPolicy as Record<string, unknown>, filterPolicyScope ?? 'MessageAttributes');
  return new Set([...events.values()].filter((item) => item.ordered === (ordered === true) && (filter === undefined || filter({ body: item.body, attributes: {} }))).map((item) => item.event.id));
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

/** The dead letters of a subscriber that carry the run's events, each explained; the messages are made visible again. */
export async function readDeadLetters(clients: VerifyClients, subscriber: DeployedSubscriber, runEvents: ReadonlyMap<string, RunEvent>): Promise<DeadLetterFinding[]> {
  const findings: DeadLetterFinding[] = [];
  for (const queueUrl of deadLetterQueuesOf(subscriber)) {
    const messages = await receiveMessages(clients.sqs, queueUrl);
    try {
      for (const message of messages) {
        const eventId = message.messageAttributes[DEAD_LETTER_ATTRIBUTE.EVENT_ID]?.StringValue ?? eventIdOf(message.body);
        if (eventId === undefined || !runEvents.has(eventId)) continue;
        const subscriptionQueue = queueUrl === subscriber.deployment.subscriptionDeadLetterQueueUrl && queueUrl !== subscriber.deployment.deadLetterQueueUrl;
        findings.push({ queueName: queueUrl.split('/').pop() ?? queueUrl, messageId: message.messageId, eventId, ...explain(message, subscriptionQueue) });
      }
    } finally {
      await releaseMessages(clients.sqs, messages);
    }
  }
  return findings;
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
    return { tallies: await probe({ client: clients.documents, environment: subscriber.environment, events, sentMessages: [] }) };
  } catch (error) {
    return { error: error instanceof Error ? error.message : String(error) };
  }
}

/**
 * The run's events an ordered subscriber committed, in the order of their inbox records' `processedAt`: a group per
 * instant (the events of one instant are not ordered among themselves).
 */
export async function inboxCommitGroups(clients: VerifyClients, subscriber: DeployedSubscriber, taken: ReadonlySet<string>): Promise<string[][]> {
  const table = subscriber.deployment.inboxTable;
  if (table === undefined) return [];
  const byTime = new Map<string, string[]>();
  for (const item of await scanAll(clients, table)) {
    const eventId = item[INBOX_ITEM.EVENT_ID_ATTRIBUTE];
    const processedAt = item[INBOX_ITEM.PROCESSED_AT_ATTRIBUTE];
    if (typeof eventId !== 'string' || typeof processedAt !== 'string' || !taken.has(eventId)) continue;
    if (item[INBOX_ITEM.SUBSCRIBER_ATTRIBUTE] !== undefined && item[INBOX_ITEM.SUBSCRIBER_ATTRIBUTE] !== subscriber.name) continue;
    byTime.set(processedAt, [...(byTime.get(processedAt) ?? []), eventId]);
  }
  return [...byTime].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, ids]) => ids);
}
