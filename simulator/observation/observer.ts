/**
 * What the simulated services report as they work. The run's ledger implements it and turns the reports into the
 * figures and the invariant checks; the services only report facts, they never decide what is a violation.
 */
import type { FaultKind } from '../faults/fault-plan';
import type { ResourceKey } from '../model/flow-model';

/** Where an SQS message came from, kept with it so the ledger can follow one event through the flow. */
export interface MessageOrigin {
  /** The envelope id of the event it carries, when the body parsed as an envelope (`id` field). */
  readonly eventId?: string;
  /** The envelope subject (the aggregate) of the event it carries, when the body parsed as an envelope with one. */
  readonly subject?: string;
  /** The subscription that delivered it, for messages fanned out by a topic. */
  readonly subscription?: ResourceKey;
  /** How it got on the queue. */
  readonly via:
    | 'sns'
    | 'send-message'
    | 'redrive'
    /** moved back from a dead-letter queue to the subscriber's queue by the (simulated) operator's redrive */
    | 'moved-back'
    /** put on a subscription's dead-letter queue by SNS, which could not deliver it to the subscription's queue */
    | 'sns-dead-letter'
    /** sent to its queue target by a pipe (the ordered relay's FIFO queue) */
    | 'pipe'
    /** put on the outbox relay's dead-letter queue by the pipe, which could not publish the stream record(s) it points at */
    | 'pipe-dead-letter';
  /** For `sns-dead-letter` and `pipe-dead-letter`: why SNS could not deliver it, or the pipe publish it. */
  readonly deliveryFailure?: string;
  /** For `redrive`: the queue it was moved from and its receive count there. */
  readonly redrivenFrom?: { readonly queue: ResourceKey; readonly receiveCount: number };
  /**
   * For `send-message`: the consumer-queue message this is a dead letter of, as the runtime names it in its
   * `iefSourceMessageId` and `iefApproximateReceiveCount` attributes (the receive it dead-lettered, when it says).
   */
  readonly deadLetterOf?: { readonly messageId: string; readonly receiveCount?: number };
}

/**
 * A message a function sent with its own SQS client (not one of the runtime's dead letters), as the simulator's SQS
 * endpoint served it: who sent it, in which invocation, and what.
 */
export interface AppSend {
  readonly functionKey: ResourceKey;
  /** The function as the report names it (its construct path). */
  readonly functionName: string;
  /** Which invocation sent it: unique in the run. */
  readonly invocation: string;
  /** The ids of the events the invocation handled (its SQS records' envelopes); none for a producer command. */
  readonly invocationEventIds: readonly string[];
  readonly queue: ResourceKey;
  readonly queueName: string;
  readonly messageId: string;
  readonly body: string;
  /** Its message attributes, by name: the string value (or the base64 binary value). @default none */
  readonly messageAttributes?: Readonly<Record<string, string>>;
}

/**
 * A message a function published with its own SNS client, as the simulator's SNS endpoint accepted it: who published
 * it, in which invocation, to which topic, and the id of the event it carries (its body's `id`, when it is JSON with one).
 */
export interface AppPublish {
  readonly functionKey: ResourceKey;
  /** The function as the report names it (its construct path). */
  readonly functionName: string;
  /** Which invocation published it: unique in the run. */
  readonly invocation: string;
  readonly topic: ResourceKey;
  /** The topic's ARN. */
  readonly topicArn: string;
  /** The event id its body carries. @default none (a body that is not an event) */
  readonly eventId?: string;
}

/** What became of one invocation. */
export type InvocationOutcome =
  | { readonly kind: 'returned'; readonly response: unknown }
  /** `atInit`: the handler could not be loaded (the runtime's init phase, at a cold start), so no invocation ran. */
  | { readonly kind: 'threw'; readonly errorName: string; readonly errorMessage: string; readonly atInit?: boolean }
  | { readonly kind: 'crashed'; readonly atRequest: number; readonly afterCommit: boolean }
  /**
   * `stuck`: the seeded scheduler ended it because no step could wake it (it waited on nothing the simulation drives),
   * not because its virtual time passed the function's timeout.
   */
  | { readonly kind: 'timed-out'; readonly timeoutSeconds: number; readonly stuck?: boolean };

/** How {@link describeFailure} starts the reason of an invocation the seeded scheduler found nothing to wake. */
export const STUCK_PREFIX = 'no step could wake the invocation: it waited on nothing the simulation drives';

/** How {@link describeFailure} starts the reason of an invocation whose handler could not be loaded. */
export const INIT_FAILURE_PREFIX = "the function's initialization (cold start) threw";

/** Why an invocation failed, in words (for dead-letter explanations and producer figures); undefined when it returned. */
export function describeFailure(outcome: InvocationOutcome): string | undefined {
  switch (outcome.kind) {
    case 'returned':
      return undefined;
    case 'threw':
      if (outcome.atInit === true) return `${INIT_FAILURE_PREFIX} ${outcome.errorName}: ${outcome.errorMessage}`;
      return `the invocation threw ${outcome.errorName}: ${outcome.errorMessage}`;
    case 'crashed':
      return `the function crashed at DynamoDB request ${outcome.atRequest} (${outcome.afterCommit ? 'after' : 'before'} DynamoDB applied it)`;
    case 'timed-out':
      if (outcome.stuck === true) return `${STUCK_PREFIX} (a real-time timer, a raw socket, an event or a promise nothing settles); it was ended as a time-out (the function's timeout is ${outcome.timeoutSeconds} s)`;
      return `the invocation timed out after ${outcome.timeoutSeconds} s`;
  }
}

/** Reports of the simulated services. All optional: a component tested alone passes `{}`. */
export interface SimulationObserver {
  /** The relay read a stream record; `published` says whether it passed the filter and went to the topic. */
  onStreamRecord?(relay: ResourceKey, record: { readonly eventId?: string; readonly published: boolean; readonly duplicate: boolean }): void;
  /** A topic delivered (or, filtered out, did not deliver) a message to a subscription's queue. */
  onFanOut?(subscription: ResourceKey, delivery: { readonly eventId?: string; readonly matched: boolean; readonly copies: number }): void;
  /**
   * SNS could not deliver a message to a subscription's queue (its queue or key policy denies SNS) and has no
   * dead-letter queue it may put it on: the message is gone.
   */
  onUndeliverable?(subscription: ResourceKey, message: { readonly eventId?: string; readonly reason: string }): void;
  /**
   * The relay (the pipe) gave up on stream records it could not publish: `deadLetterQueue` is where their dead letter
   * went; without it they are gone (no dead-letter queue, the pipe may not send there, or the stream trimmed them).
   */
  onRelayGaveUp?(relay: ResourceKey, records: { readonly eventIds: readonly string[]; readonly reason: string; readonly deadLetterQueue?: ResourceKey }): void;
  /** A message was put on a queue. */
  onEnqueued?(queue: ResourceKey, message: { readonly messageId: string; readonly origin: MessageOrigin }): void;
  /** A message was deleted from a queue (acknowledged). */
  onDeleted?(queue: ResourceKey, message: { readonly messageId: string; readonly origin: MessageOrigin; readonly receiveCount: number }): void;
  /** SQS moved a message to the queue's dead-letter queue after `maxReceiveCount` receives. */
  onRedriven?(queue: ResourceKey, message: { readonly messageId: string; readonly origin: MessageOrigin; readonly receiveCount: number; readonly deadLetterQueue: ResourceKey }): void;
  /** A message outlived the queue's retention period and is gone. */
  onExpired?(queue: ResourceKey, message: { readonly messageId: string; readonly origin: MessageOrigin; /** When, epoch milliseconds (simulated). @default unknown */ readonly expiredAt?: number }): void;
  /** A function was invoked by an event source mapping with these messages. */
  onInvocation?(
    mapping: ResourceKey,
    invocation: {
      readonly functionKey: ResourceKey;
      readonly messages: readonly { readonly messageId: string; readonly origin: MessageOrigin; readonly receiveCount: number }[];
      readonly outcome: InvocationOutcome;
      /** Message ids the function reported as failed (`batchItemFailures`); all of them when the whole batch failed. */
      readonly failedMessageIds: readonly string[];
      /** The lines the function wrote during this invocation (its per-record outcome lines among them), when captured. */
      readonly output?: readonly string[];
    },
  ): void;
  /**
   * A fault was injected. `subject` says on what (a function, a queue, a subscription, a relay); `detail.messageId` the
   * SQS message it hit, when one; `detail.count` how many times it happened at once (failed attempts of one delivery);
   * `detail.invocationKey` the invocation whose DynamoDB request it hit (the key the function's runner was given), when
   * one. @default count 1
   */
  onFault?(kind: FaultKind, subject: ResourceKey, detail?: { readonly messageId?: string; readonly count?: number; readonly invocationKey?: string }): void;
  /** A function sent a message with its own SQS client (the runtime's dead letters are not reported here). */
  onAppSend?(send: AppSend): void;
  /** A function published a message with its own SNS client (the ordered fan-out's publishes included). */
  onAppPublish?(publish: AppPublish): void;
  /** A line a function wrote to stdout or stderr (its logs and EMF metrics). */
  onFunctionOutput?(functionKey: ResourceKey, line: string, stream: 'stdout' | 'stderr'): void;
}
