/**
 * Plays the operator of the lease and multi-step modes once a run has settled, the way docs/PROCESSING-MODES.md tells a
 * human to: list the subscriber's blocked messages, decide for each blocked step whether it took effect (the
 * scenario's {@link OperatorDecision} looks at the effect, as an operator would look at the mail gateway or the
 * accounting system), resolve it through the runtime's `BlockedMessages` API (audited, version-checked), then redrive
 * the subscriber's dead letters to its queue by the rules of `idempotent-event-flow dlq redrive`, through its code: a
 * message still blocked, one whose copy could outlive the deduplication window, every one of a subscriber in aggregate
 * mode stays, with why (another subscriber's dead letters in a shared queue stay too). The run then goes on until it
 * settles again; a message blocked again (faults go on) is resolved in the next pass.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import {
  BlockedMessages,
  decideSubscriberRedrive,
  deadLetterView,
  DEFAULT_DEDUPLICATION_WINDOW_SECONDS,
  DEFAULT_SAFETY_MARGIN_SECONDS,
  lookUpInboxRecord,
  ResolveRefusedError,
  type DeadLetterView,
  type QueueMessage,
  type RedriveDecision,
} from '../../operator/index';
import type { ProcessingRecordView } from '../../lambda/processing/processing-record';
import { DEAD_LETTER_ATTRIBUTE } from '../../lambda/consumer/dead-letter';
import { ENV } from '../../lambda/contract/environment';
import type { VirtualClock } from '../aws/clock';
import type { SimulatedQueue } from '../aws/queue';
import type { StoredMessage } from '../aws/sqs-messages';
import type { SubscriberView } from '../observation/run-facts';
import type { SimulatedEvent } from '../observation/run-facts';

/** What an operator decides about one blocked step. */
export interface OperatorResolution {
  /** `SUCCESS`: the step took effect, never run it again; `TRY_AGAIN`: it did not, run it on the next delivery. */
  readonly status: 'SUCCESS' | 'TRY_AGAIN';
  /** Merged into the record's context (e.g. the `invoiceId` a step that took effect created). @default nothing */
  readonly context?: Readonly<Record<string, unknown>>;
  /** Why: kept in the record's audit trail. */
  readonly reason: string;
}

/** What an {@link OperatorDecision} is shown. */
export interface BlockedStep {
  /** The blocked processing record, as the operator command shows it (steps, context, reason, version). */
  readonly record: ProcessingRecordView;
  /** The blocked step (`effect` in lease mode). */
  readonly step: string;
  /** The event the message carries, when the outbox holds it. */
  readonly event?: SimulatedEvent;
  /** A client of the local DynamoDB (no faults), to look at the effect. */
  readonly client: DynamoDBDocumentClient;
  /** The subscriber consumer's resolved environment (its table names). */
  readonly environment: Readonly<Record<string, string>>;
}

/** Decides a blocked step of one subscriber, by looking at whether its effect happened. */
export type OperatorDecision = (blocked: BlockedStep) => Promise<OperatorResolution>;

/** What the operator did over a run. */
export interface OperatorFigures {
  /** Passes that resolved something. */
  passes: number;
  resolvedSuccess: number;
  resolvedTryAgain: number;
  /** Dead letters moved back to their subscriber's queue. */
  movedBack: number;
  /** Resolutions the runtime refused (e.g. the record changed meanwhile), with why. */
  readonly refused: string[];
  /** Dead letters the redrive's rules (`dlq redrive`'s) left where they are, with why. */
  readonly redriveRefused: string[];
}

/** How many operator passes a run makes at most (each after the run settled again). */
export const MAX_OPERATOR_PASSES = 5;

/** Empty figures. */
export function noOperatorFigures(): OperatorFigures {
  return { passes: 0, resolvedSuccess: 0, resolvedTryAgain: 0, movedBack: 0, refused: [], redriveRefused: [] };
}

/**
 * Whether a dead letter is `subscriber`'s: a message SQS moved there from the subscriber's queue, or one the runtime
 * sent naming it (`iefSubscriber`). A dead-letter queue may be shared by several subscribers: a message that names
 * another subscriber or queue stays where it is (moving it to this queue would hand it to the wrong consumer).
 */
function isDeadLetterOf(message: StoredMessage, subscriber: SubscriberView): boolean {
  const movedFrom = message.origin.redrivenFrom?.queue;
  if (movedFrom !== undefined) return movedFrom === subscriber.queue.model.key;
  const named = message.messageAttributes[DEAD_LETTER_ATTRIBUTE.SUBSCRIBER]?.StringValue;
  return named === undefined || named === subscriber.name;
}

/** A dead letter of a simulated queue as `dlq redrive` reads one from SQS (its system attributes as SQS sets them). */
export function deadLetterViewOf(message: StoredMessage, deadLetterQueue: SimulatedQueue, subscriber: SubscriberView): DeadLetterView {
  const received: QueueMessage = {
    queueUrl: deadLetterQueue.address.url,
    messageId: message.messageId,
    receiptHandle: '',
    body: message.body,
    // only SQS's own move after maxReceiveCount sets DeadLetterQueueSourceArn
    attributes: { SentTimestamp: String(message.sentAt), ...(message.origin.via === 'redrive' ? { DeadLetterQueueSourceArn: subscriber.queue.address.arn } : {}) },
    messageAttributes: Object.fromEntries(
      Object.entries(message.messageAttributes).map(([name, value]) => [
        name,
        { DataType: value.DataType, StringValue: value.StringValue, ...(value.BinaryValue === undefined ? {} : { BinaryValue: Buffer.from(value.BinaryValue, 'base64') }) },
      ]),
    ),
  };
  const kind = subscriber.subscription.deadLetterQueue === deadLetterQueue.model.key ? 'subscription' : 'queue';
  return deadLetterView(received, kind);
}

/** Decides whether a dead letter of the subscriber may be redriven to its queue, now. */
export type RedriveDecider = (view: DeadLetterView) => Promise<RedriveDecision>;

/**
 * The decision `dlq redrive --subscriber-output <the subscriber's output> --yes` makes for each dead letter, by its
 * code (simulator/cli/dead-letters/redrive-decision.ts): its inbox record looked up (a blocked message must have been
 * resolved), the subscriber's deduplication window against the dead letter's age and the queue's retention, refused
 * in aggregate mode; never `--allow-expired` nor `--allow-reapply`.
 */
export function dlqRedriveRules(subscriber: SubscriberView, deps: { readonly documents: DynamoDBDocumentClient; readonly clock: VirtualClock }): RedriveDecider {
  const window = Number(subscriber.environment[ENV.DEDUPLICATION_WINDOW_SECONDS]);
  const mode = subscriber.environment[ENV.PROCESSING_MODE];
  return async (view) => {
    const record = mode === 'aggregate' ? ({ kind: 'not-looked-up' } as const) : await lookUpInboxRecord(deps.documents, subscriber.environment[ENV.INBOX_TABLE_NAME], subscriber.name, view.eventId);
    return decideSubscriberRedrive(view, record, {
      subscriberName: subscriber.name,
      ...(mode === undefined ? {} : { processingMode: mode }),
      allowReapply: false,
      allowExpired: false,
      deduplicationWindowSeconds: Number.isFinite(window) && window > 0 ? window : DEFAULT_DEDUPLICATION_WINDOW_SECONDS,
      safetyMarginSeconds: DEFAULT_SAFETY_MARGIN_SECONDS,
      nowEpochMilliseconds: deps.clock.now(),
      destination: { queueUrl: subscriber.queue.address.url, retentionSeconds: subscriber.queue.model.messageRetentionSeconds, known: true },
    });
  };
}

/** What a redrive did: moved back, and refused with why (`<event id>: <why>`). */
export interface RedriveOutcome {
  readonly moved: number;
  readonly refused: readonly string[];
}

/**
 * Moves the dead letters of the subscriber (see {@link isDeadLetterOf}) that `decide` admits from its dead-letter
 * queues back to its queue, one at a time (send, then delete), as `dlq redrive` does; the others stay.
 */
export async function redriveDeadLetters(subscriber: SubscriberView, decide: RedriveDecider): Promise<RedriveOutcome> {
  let moved = 0;
  const refused: string[] = [];
  for (const deadLetterQueue of subscriber.deadLetterQueues) {
    const own = new Set(deadLetterQueue.messages().filter((message) => isDeadLetterOf(message, subscriber)).map((message) => message.messageId));
    const decisions = new Map<string, RedriveDecision>();
    for (const message of deadLetterQueue.messages()) {
      if (!own.has(message.messageId)) continue;
      const view = deadLetterViewOf(message, deadLetterQueue, subscriber);
      const decision = await decide(view);
      decisions.set(message.messageId, decision);
      if (!decision.redrive) refused.push(`${view.eventId ?? message.messageId}: ${decision.refusal ?? 'refused'}`);
    }
    const received = new Set<string>();
    for (;;) {
      // a received message that is not moved stays on the queue (visible again after its visibility timeout); stop when
      // a receive brings nothing new (with no visibility timeout, the same messages come again)
      const batch = deadLetterQueue.receive(10);
      if (batch.every((message) => received.has(message.messageId))) break;
      for (const message of batch) {
        received.add(message.messageId);
        if (decisions.get(message.messageId)?.redrive !== true) continue;
        subscriber.queue.send({
          body: message.body,
          messageAttributes: { ...message.messageAttributes },
          // the event's subject too: the checks tell by it which event of a batch a write was made for
          origin: { via: 'moved-back', eventId: message.origin.eventId, ...(message.origin.subject === undefined ? {} : { subject: message.origin.subject }), subscription: subscriber.subscription.key },
        });
        deadLetterQueue.delete(message.receiptHandle);
        moved += 1;
      }
    }
  }
  return { moved, refused };
}

/**
 * One operator pass over every subscriber with a decision: resolves each blocked step, then redrives the dead-letter
 * queues of the subscribers it resolved something for. Returns how many steps it resolved.
 */
export async function operatorPass(
  subscribers: readonly SubscriberView[],
  decisions: Readonly<Record<string, OperatorDecision>>,
  deps: {
    readonly client: DynamoDBClient;
    readonly documents: DynamoDBDocumentClient;
    readonly clock: VirtualClock;
    readonly eventsById: ReadonlyMap<string, SimulatedEvent>;
    /** Told each resolution the runtime accepted (the run's checks read the decisions: check/apply-attribution.ts). @default none */
    readonly onResolved?: (subscriber: string, eventId: string, step: string, status: OperatorResolution['status']) => void;
  },
  figures: OperatorFigures,
): Promise<number> {
  let resolved = 0;
  for (const subscriber of subscribers) {
    const decide = decisions[subscriber.name];
    const tableName = subscriber.environment[ENV.INBOX_TABLE_NAME];
    if (decide === undefined || tableName === undefined) continue;
    const blockedMessages = new BlockedMessages({ client: deps.client, tableName, now: () => new Date(deps.clock.now()) });
    let resolvedHere = 0;
    let listed;
    try {
      listed = await blockedMessages.list({ subscriber: subscriber.name, limit: 1000 });
    } catch (error) {
      // the operator's role may not list them (IAM): the run reports the denial; nothing is resolved here
      if (!(error instanceof Error && error.name === 'AccessDeniedException')) throw error;
      figures.refused.push(`${subscriber.name}: listing the blocked messages was denied: ${error.message}`);
      continue;
    }
    for (const blocked of listed) {
      let resolution: Awaited<ReturnType<OperatorDecision>>;
      try {
        const record = await blockedMessages.get(subscriber.name, blocked.eventId);
        if (record === undefined || blocked.step === undefined) continue;
        resolution = await decide({ record, step: blocked.step, event: deps.eventsById.get(blocked.eventId), client: deps.documents, environment: subscriber.environment });
        await blockedMessages.resolve({
          subscriber: subscriber.name,
          eventId: blocked.eventId,
          step: blocked.step,
          status: resolution.status,
          context: resolution.context,
          reason: resolution.reason,
          resolvedBy: 'simulator (scenario operator)',
          expectedVersion: record.version,
        });
      } catch (error) {
        // a refused resolution, or a call the operator's role may not make (IAM): the run reports it and goes on
        const denied = error instanceof Error && error.name === 'AccessDeniedException';
        if (!(error instanceof ResolveRefusedError) && !denied) throw error;
        figures.refused.push(`${subscriber.name} ${blocked.eventId}: ${(error as Error).message}`);
        continue;
      }
      deps.onResolved?.(subscriber.name, blocked.eventId, blocked.step, resolution.status);
      if (resolution.status === 'SUCCESS') figures.resolvedSuccess += 1;
      else figures.resolvedTryAgain += 1;
      resolvedHere += 1;
    }
    if (resolvedHere > 0) {
      const redriven = await redriveDeadLetters(subscriber, dlqRedriveRules(subscriber, deps));
      figures.movedBack += redriven.moved;
      figures.redriveRefused.push(...redriven.refused.map((why) => `${subscriber.name} ${why}`));
    }
    resolved += resolvedHere;
  }
  if (resolved > 0) figures.passes += 1;
  return resolved;
}
