/**
 * Plays the operator of the lease and multi-step modes once a run has settled, the way docs/PROCESSING-MODES.md tells a
 * human to: list the subscriber's blocked messages, decide for each blocked step whether it took effect (the
 * scenario's {@link OperatorDecision} looks at the effect, as an operator would look at the mail gateway or the
 * accounting system), resolve it through the runtime's `BlockedMessages` API (audited, version-checked), then redrive
 * the subscriber's dead-letter queues to its queue (as SQS's dead-letter queue redrive does: every message of the
 * subscriber, moved back; another subscriber's dead letters in a shared queue stay). The run then goes on until it settles again; a message blocked again (faults go on) is resolved in the next
 * pass.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { BlockedMessages, ResolveRefusedError } from '../../lambda/operator/blocked-messages';
import type { ProcessingRecordView } from '../../lambda/processing/processing-record';
import { DEAD_LETTER_ATTRIBUTE } from '../../lambda/consumer/dead-letter';
import { ENV } from '../../lambda/contract/environment';
import type { VirtualClock } from '../aws/clock';
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
}

/** How many operator passes a run makes at most (each after the run settled again). */
export const MAX_OPERATOR_PASSES = 5;

/** Empty figures. */
export function noOperatorFigures(): OperatorFigures {
  return { passes: 0, resolvedSuccess: 0, resolvedTryAgain: 0, movedBack: 0, refused: [] };
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

/** Moves every dead letter of the subscriber (see {@link isDeadLetterOf}) from its dead-letter queues back to its queue; returns how many. */
export function redriveDeadLetters(subscriber: SubscriberView): number {
  let moved = 0;
  for (const deadLetterQueue of subscriber.deadLetterQueues) {
    const own = new Set(deadLetterQueue.messages().filter((message) => isDeadLetterOf(message, subscriber)).map((message) => message.messageId));
    const received = new Set<string>();
    for (;;) {
      // a received message that is not ours stays on the queue (visible again after its visibility timeout); stop when
      // a receive brings nothing new (with no visibility timeout, the same messages come again)
      const batch = deadLetterQueue.receive(10);
      if (batch.every((message) => received.has(message.messageId))) break;
      for (const message of batch) {
        received.add(message.messageId);
        if (!own.has(message.messageId)) continue;
        subscriber.queue.send({
          body: message.body,
          messageAttributes: { ...message.messageAttributes },
          origin: { via: 'moved-back', eventId: message.origin.eventId, subscription: subscriber.subscription.key },
        });
        deadLetterQueue.delete(message.receiptHandle);
        moved += 1;
      }
    }
  }
  return moved;
}

/**
 * One operator pass over every subscriber with a decision: resolves each blocked step, then redrives the dead-letter
 * queues of the subscribers it resolved something for. Returns how many steps it resolved.
 */
export async function operatorPass(
  subscribers: readonly SubscriberView[],
  decisions: Readonly<Record<string, OperatorDecision>>,
  deps: { readonly client: DynamoDBClient; readonly documents: DynamoDBDocumentClient; readonly clock: VirtualClock; readonly eventsById: ReadonlyMap<string, SimulatedEvent> },
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
      if (resolution.status === 'SUCCESS') figures.resolvedSuccess += 1;
      else figures.resolvedTryAgain += 1;
      resolvedHere += 1;
    }
    if (resolvedHere > 0) figures.movedBack += redriveDeadLetters(subscriber);
    resolved += resolvedHere;
  }
  if (resolved > 0) figures.passes += 1;
  return resolved;
}
