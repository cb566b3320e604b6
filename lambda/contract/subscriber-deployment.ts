/**
 * What a deployed subscriber's `<subscriber>/Operator` stack output holds: everything the operator commands need to
 * act on that subscriber without the operator typing it (its queues and tables, its processing mode, its deduplication
 * window, its subscription's filter policy). The constructs write it (lib/), the CLI reads it (`--subscriber-output`)
 * and the simulator's served run prints it with the run's local names. Pure: imports no AWS SDK, so `lib/` shares it.
 */

/** Version of the output's format; a reader refuses a version it does not know. */
export const SUBSCRIBER_DEPLOYMENT_FORMAT = 1;

/** The processing modes, by the names the output uses (the same as `IEF_PROCESSING_MODE`). */
const MODES = ['transactional', 'lease', 'multi-step', 'aggregate'] as const;

/** Scopes of an SNS subscription filter policy. */
const SCOPES = ['MessageBody', 'MessageAttributes'] as const;

/** A deployed subscriber, as its `<subscriber>/Operator` stack output says (JSON). */
export interface SubscriberDeployment {
  /** The format's version (1 for this release); a reader refuses one it does not know. */
  readonly format: number;
  readonly subscriberName: string;
  readonly processingMode: (typeof MODES)[number];
  /** The subscriber's queue: where a redrive or a replay sends. */
  readonly queueUrl: string;
  /** The queue's dead-letter queue (its redrive policy's target, and where the runtime sends its dead letters). */
  readonly deadLetterQueueUrl: string;
  /** What SNS could not deliver to the queue. */
  readonly subscriptionDeadLetterQueueUrl?: string;
  /** The inbox table (inbox and processing records); absent in aggregate mode, which keeps none. */
  readonly inboxTable?: string;
  /** How long a dedup record lives (its TTL), in seconds; absent in aggregate mode. */
  readonly deduplicationWindowSeconds?: number;
  /** Whether a blocked message's body is kept on its record (lease and multi-step). */
  readonly keepBlockedMessageBody?: boolean;
  /** The subscription's filter policy, as SNS takes it; absent when the subscriber takes every event. */
  readonly filterPolicy?: Readonly<Record<string, unknown>>;
  /** The filter policy's scope. @default 'MessageAttributes', as SNS's */
  readonly filterPolicyScope?: (typeof SCOPES)[number];
  /** The outbox table of the flow whose topic it subscribes to: what `replay` reads. */
  readonly outboxTable?: string;
  /**
   * The attribute the outbox table's TTL reads (`expiresAt` on the flow's own table, `timeToLiveAttributeName` on an
   * existing one): `replay` reads an item's expiry under it and never sends an item past it. Named even when
   * `outboxTable` is not (a literal). Absent from the outputs of subscribers deployed before it was added, and for a
   * flow imported with `fromFlowAttributes`.
   */
  readonly outboxTimeToLiveAttribute?: string;
  /** The consumer function. */
  readonly consumerFunctionName?: string;
  /**
   * The ARN of the topic its subscription is on (the flow's event topic, or an ordered relay's FIFO topic): it names
   * the flow's account and Region, where the outbox is, so `replay --flow-profile` can prove the profile reaches that
   * flow's account and not another environment's. Absent from the outputs of subscribers deployed before it was added.
   */
  readonly topicArn?: string;
  /**
   * True for an ordered subscriber (`OrderedSubscriber`, docs/ORDERED-DELIVERY.md): its queues are FIFO, its inbox
   * table holds its sequence fences, and `outboxTable` holds the ordered history. Its dead letters are redriven and
   * its events replayed in sequence per aggregate, the aggregate as the message group, as the fences admit them.
   * @default false
   */
  readonly ordered?: boolean;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Reads the value of a `<subscriber>/Operator` stack output (JSON text). Throws an Error naming the field when it is
 * not such an output: a missing or mistyped field, an unknown mode or format.
 */
export function parseSubscriberDeployment(text: string): SubscriberDeployment {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new Error(`it is not JSON (${(error as Error).message})`);
  }
  if (!isObject(value)) throw new Error('it is not a JSON object');
  const problem = (field: string, wanted: string): Error => new Error(`its field '${field}' must be ${wanted}, but was ${JSON.stringify(value[field]) ?? 'absent'}`);
  const text_ = (field: string, required: boolean): void => {
    if (value[field] === undefined && !required) return;
    if (typeof value[field] !== 'string' || value[field] === '') throw problem(field, 'a non-empty string');
  };
  if (value.format !== SUBSCRIBER_DEPLOYMENT_FORMAT) {
    throw problem('format', `${SUBSCRIBER_DEPLOYMENT_FORMAT} (the output of another version of idempotent-event-flow? use the CLI of the version that deployed it)`);
  }
  for (const field of ['subscriberName', 'queueUrl', 'deadLetterQueueUrl']) text_(field, true);
  for (const field of ['subscriptionDeadLetterQueueUrl', 'inboxTable', 'outboxTable', 'outboxTimeToLiveAttribute', 'consumerFunctionName', 'topicArn']) text_(field, false);
  if (!(MODES as readonly unknown[]).includes(value.processingMode)) throw problem('processingMode', `one of ${MODES.join(', ')}`);
  const window = value.deduplicationWindowSeconds;
  if (window !== undefined && !(Number.isSafeInteger(window) && (window as number) > 0)) throw problem('deduplicationWindowSeconds', 'a whole number of seconds above 0');
  if (value.processingMode !== 'aggregate' && (window === undefined || value.inboxTable === undefined)) {
    throw problem(window === undefined ? 'deduplicationWindowSeconds' : 'inboxTable', `present for a subscriber in ${String(value.processingMode)} mode`);
  }
  for (const field of ['keepBlockedMessageBody', 'ordered']) {
    if (value[field] !== undefined && typeof value[field] !== 'boolean') throw problem(field, 'true or false');
  }
  if (value.ordered === true && value.processingMode !== 'transactional') throw problem('processingMode', "transactional for an ordered subscriber (its fence is written in the handler's transaction)");
  if (value.filterPolicy !== undefined && !isObject(value.filterPolicy)) throw problem('filterPolicy', 'a JSON object');
  if (value.filterPolicyScope !== undefined && !(SCOPES as readonly unknown[]).includes(value.filterPolicyScope)) throw problem('filterPolicyScope', `one of ${SCOPES.join(', ')}`);
  return value as unknown as SubscriberDeployment;
}
