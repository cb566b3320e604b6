/**
 * The deployed subscribers' queue settings verify's wait depends on, read from the queues themselves
 * (GetQueueAttributes: `VisibilityTimeout`, `RedrivePolicy`): a message whose handler fails is received again after
 * each visibility timeout, and SQS moves it to the dead-letter queue after `maxReceiveCount` receives. So a broken
 * subscriber's events reach a verdict (dead-lettered, `unapplied-event`) only about maxReceiveCount x visibility timeout
 * after their first receive: the default time limit of the wait ({@link defaultTimeoutSeconds}) is derived from it. On an
 * ordered subscriber's FIFO queue an aggregate's events are one message group, dead-lettered one after another.
 */
import { GetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import type { VerifyClients } from './clients';
import { emittedOutboxOf, type DeployedFlow, type DeployedSubscriber } from './deployed-flow';
import { takenEvents, type RunEvent } from './observe';

/** One queue's settings. */
export interface QueueSettings {
  readonly visibilityTimeoutSeconds: number;
  /** Receives before SQS moves a message to the dead-letter queue. @default none: the queue has no redrive policy */
  readonly maxReceiveCount?: number;
}

/** Each subscriber queue's settings, by queue URL (a queue whose attributes name no visibility timeout is left out). */
export async function readQueueSettings(clients: VerifyClients, flow: Pick<DeployedFlow, 'subscribers'>): Promise<Map<string, QueueSettings>> {
  const settings = new Map<string, QueueSettings>();
  for (const url of new Set(flow.subscribers.map((subscriber) => subscriber.deployment.queueUrl))) {
    const attributes = (await clients.sqs.send(new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['VisibilityTimeout', 'RedrivePolicy'] }))).Attributes ?? {};
    const visibilityTimeoutSeconds = Number(attributes.VisibilityTimeout);
    if (!Number.isFinite(visibilityTimeoutSeconds)) continue;
    let maxReceiveCount: number | undefined;
    try {
      const policy = JSON.parse(attributes.RedrivePolicy ?? '{}') as { maxReceiveCount?: unknown };
      const count = Number(policy.maxReceiveCount);
      if (Number.isInteger(count) && count > 0) maxReceiveCount = count;
    } catch {
      // no redrive policy verify can read: no bound from it
    }
    settings.set(url, { visibilityTimeoutSeconds, ...(maxReceiveCount === undefined ? {} : { maxReceiveCount }) });
  }
  return settings;
}

/** The time limit when `--timeout` is not given, at least this. */
export const MINIMUM_DEFAULT_TIMEOUT_SECONDS = 600;
/** Added to the derived bound: the relay's lag (the pipe polls the stream, SNS delivers) and verify's own looks. */
export const DEFAULT_TIMEOUT_MARGIN_SECONDS = 120;

/**
 * The largest number of the run's events one aggregate puts on an ordered subscriber's FIFO queue (one message group),
 * with that aggregate; undefined for a subscriber that is not ordered or takes no ordered event.
 */
function largestGroup(subscriber: DeployedSubscriber, events: ReadonlyMap<string, RunEvent>): { readonly aggregateId: string; readonly count: number } | undefined {
  if (subscriber.deployment.ordered !== true) return undefined;
  const counts = new Map<string, number>();
  for (const id of takenEvents(subscriber, events)) {
    const aggregateId = events.get(id)?.event.ordering?.aggregateId;
    if (aggregateId !== undefined) counts.set(aggregateId, (counts.get(aggregateId) ?? 0) + 1);
  }
  let largest: { aggregateId: string; count: number } | undefined;
  for (const [aggregateId, count] of [...counts].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    if (largest === undefined || count > largest.count) largest = { aggregateId, count };
  }
  return largest;
}

/**
 * The default time limit of the wait: the longest a failing event takes to reach a dead-letter queue on any
 * subscriber's queue (maxReceiveCount x visibility timeout; on an ordered subscriber's FIFO queue, times the largest
 * number of the run's `events` of one aggregate it takes: a message group's messages wait behind its failing head,
 * then fail one after another), once per hop of the flow (a subscriber that emits events adds a hop: its events start
 * their own deliveries), plus {@link DEFAULT_TIMEOUT_MARGIN_SECONDS}; at least {@link MINIMUM_DEFAULT_TIMEOUT_SECONDS}.
 * With it, a subscriber whose handler throws on every event ends VIOLATED (its events dead-lettered, named) rather
 * than "not quiet". `why` says how it was derived. Without `events` (before the run's commands), one message per queue.
 */
export function defaultTimeoutSeconds(
  flow: Pick<DeployedFlow, 'subscribers'>,
  settings: ReadonlyMap<string, QueueSettings>,
  events?: ReadonlyMap<string, RunEvent>,
): { readonly seconds: number; readonly why: string } {
  let longest: { name: string; seconds: number; settings: QueueSettings; group: { aggregateId: string; count: number } | undefined } | undefined;
  for (const subscriber of flow.subscribers) {
    const queue = settings.get(subscriber.deployment.queueUrl);
    if (queue?.maxReceiveCount === undefined) continue;
    const group = events === undefined ? undefined : largestGroup(subscriber, events);
    const seconds = (group?.count ?? 1) * queue.maxReceiveCount * queue.visibilityTimeoutSeconds;
    if (longest === undefined || seconds > longest.seconds) longest = { name: subscriber.name, seconds, settings: queue, group };
  }
  if (longest === undefined) return { seconds: MINIMUM_DEFAULT_TIMEOUT_SECONDS, why: 'no subscriber queue with a redrive policy verify could read' };
  const hops = 1 + flow.subscribers.filter((subscriber) => emittedOutboxOf(subscriber) !== undefined).length;
  const derived = hops * longest.seconds + DEFAULT_TIMEOUT_MARGIN_SECONDS;
  const group = longest.group !== undefined && longest.group.count > 1 ? `${longest.group.count} events of one aggregate (${longest.group.aggregateId}) on ${longest.name}'s FIFO queue, dead-lettered one after another, x ` : '';
  const why = `${hops > 1 ? `${hops} hops x ` : ''}${group}maxReceiveCount ${longest.settings.maxReceiveCount} x visibility timeout ${longest.settings.visibilityTimeoutSeconds} s (${longest.name}'s queue) + ${DEFAULT_TIMEOUT_MARGIN_SECONDS} s`;
  return { seconds: Math.max(MINIMUM_DEFAULT_TIMEOUT_SECONDS, derived), why: derived < MINIMUM_DEFAULT_TIMEOUT_SECONDS ? `${why}, raised to ${MINIMUM_DEFAULT_TIMEOUT_SECONDS} s` : why };
}
