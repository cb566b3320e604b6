/**
 * The facts of a run that the checks read, defined below the run that gathers them (simulator/run/) so that check/,
 * report/ and the run share them without importing the layer above: what a subscriber is made of, what the rounds
 * ended with, what the producers did, what the probes counted, which outbox items carried no event id.
 */
import type { SimulatedQueue } from '../aws/queue';
import type { EventSourceMappingModel, FunctionModel, SubscriptionModel } from '../model/flow-model';

/**
 * What the checks a deployed flow can be checked by too (`verify`: simulator/verify/) read of a subscriber: its name,
 * its subscription's key, its queue's key, name, FIFO-ness, message count and the events of the messages still on it,
 * its dead-letter queues' keys and its function's key. A {@link SubscriberView} is one; verify builds one from what
 * the deployed stacks say, so such a check that reads more of a subscriber does not compile.
 */
export interface ObservableSubscriberView {
  readonly name: string;
  readonly subscription: { readonly key: string };
  readonly queue: {
    /** `visibilityTimeoutSeconds`, `redrive` (its `maxReceiveCount`): @default unknown (verify's) */
    readonly model: { readonly key: string; readonly fifo: boolean; readonly visibilityTimeoutSeconds?: number; readonly redrive?: { readonly maxReceiveCount: number } };
    readonly address: { readonly name: string };
    counts(): { readonly total: number };
    messages(): readonly { readonly origin: { readonly eventId?: string } }[];
  };
  readonly deadLetterQueues: readonly { readonly model: { readonly key: string } }[];
  /** @default none: no consumer function the run tracked (verify's) */
  readonly function?: { readonly key: string };
  readonly environment: Readonly<Record<string, string>>;
}

/** One subscription and what consumes it, as the report and the checks see it. */
export interface SubscriberView extends ObservableSubscriberView {
  /** `IEF_SUBSCRIBER_NAME` of the consumer, else the subscription's construct path or key. */
  readonly name: string;
  readonly subscription: SubscriptionModel;
  readonly queue: SimulatedQueue;
  /** Every queue where this subscriber's messages can end up dead: the queue's redrive target, the subscription's, the runtime's own. */
  readonly deadLetterQueues: readonly SimulatedQueue[];
  readonly mapping?: EventSourceMappingModel;
  readonly function?: FunctionModel;
  /** The consumer's resolved environment (empty without a consumer). */
  readonly environment: Readonly<Record<string, string>>;
}

/** What the rounds ended with. */
export interface RoundsOutcome {
  readonly rounds: number;
  /** Set when the run stopped at `maxSimulatedSeconds` with messages still in flight (not settled). */
  readonly cutOff?: {
    /** Which limit stopped it: the simulated time, or the number of rounds. */
    readonly limit: 'simulated-time' | 'rounds';
    readonly maxSimulatedSeconds: number;
    readonly maxRounds: number;
    /** Queue names and how many of their messages were in flight. */
    readonly inFlight: readonly { readonly queue: string; readonly messages: number }[];
  };
}

/** What the producer side did. */
export interface ProducerFigures {
  /** Commands (or user events) to produce. */
  readonly total: number;
  /** Commands whose invocation eventually returned. */
  succeeded: number;
  /** Invocations that failed and were tried again. */
  retried: number;
  /** Commands that failed every attempt, with the last reason (their events may still have committed: a lost response). */
  readonly failed: ProducerFailure[];
  /** Per producer (by its function's construct path), when the scenario drives several. @default one producer */
  readonly byProducer?: readonly ProducerFiguresOf[];
}

/** A command that failed every attempt. */
export interface ProducerFailure {
  /** The command's index in the scenario's commands, from 0 (the report's text numbers it from 1: `#1` is index 0). */
  readonly index: number;
  /** The last attempt's reason. */
  readonly reason: string;
  /** The producer, when the scenario drives several. */
  readonly producer?: string;
  /**
   * Whether a write of one of its attempts was applied without the producer seeing it (its response was lost, or the
   * function crashed after it): a later attempt then meets its own earlier write.
   */
  readonly afterUnseenWrite?: boolean;
}

/** The figures of one of several producers. */
export interface ProducerFiguresOf {
  /** The producer function, as the report names it (its construct path). */
  readonly producer: string;
  readonly total: number;
  readonly succeeded: number;
  readonly retried: number;
  readonly failed: number;
}

/** What the probe of one subscriber observed: how often the effect of some events was applied. */
export interface EffectTally {
  /** What was counted, e.g. `customer C1 orderCount` or `order O7 invoices`: shown when the count is wrong. */
  readonly subject: string;
  /** The events whose effects this count covers (one for a per-event effect, several for an aggregate). */
  readonly eventIds: readonly string[];
  /** How many effect applications were observed for them together. */
  readonly applied: number;
}

/** A business change the producer's commands committed, and the events that had to commit with it. */
export interface BusinessChange {
  /** What changed, e.g. `order O7`: shown when its event is missing. */
  readonly subject: string;
  /** The ids of the events that must be in the outbox because this change exists (usually one). */
  readonly eventIds: readonly string[];
}

/** An outbox item the pipe relays as a message with no event id: nothing downstream can be followed to it. */
export interface UntrackedItem {
  readonly relay: string;
  /** The item's key, as JSON. */
  readonly item: string;
}

/** An event as the flow carried it: the envelope fields the effect probes need. */
export interface SimulatedEvent {
  readonly id: string;
  readonly type: string;
  readonly subject?: string;
  readonly data: unknown;
  /** An ordered event's aggregate (`partitionkey`) and sequence (`sequence`). @default not an ordered event */
  readonly ordering?: { readonly aggregateId: string; readonly sequence: number };
}
