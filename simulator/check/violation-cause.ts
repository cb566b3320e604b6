/**
 * The cause of a violation as fields a program can read: what kind of mistake the run saw, where (subscriber or
 * producer, events, invocations, requests, the setting), and the change the user must make. A check that can tell why
 * it fails gives its violations causes; the result lists them by violation (`SimulationResult.causes`) and `--json`
 * writes them on each violation (`violations[].causes`). The kinds are a stable vocabulary: a new one is added, none is
 * renamed (docs/SIMULATOR.md, "Causes").
 */

import { PROCESSED_MESSAGES_LIMITS } from '../../lambda/aggregate/processed-messages';

/** What the user did that the run caught (each kind's fix is in `ViolationCause.fix`). */
export type CauseKind =
  /** A transactional or aggregate consumer wrote with its own client, outside its inbox transaction. */
  | 'write-outside-transaction'
  /** A consumer published a follow-up event with an outbox write of its own instead of `tx.emit`. */
  | 'outbox-write-outside-transaction'
  /** A call whose response was lost (an unknown outcome) was classified as retryable, and the retry ran the effect again. */
  | 'lost-response-retried'
  /** The SDK retried, within one invocation, a write DynamoDB had applied whose response was lost: a non-idempotent write (e.g. `ADD`) ran twice. */
  | 'sdk-retry-after-lost-response'
  /** The invocation crashed after its effect, and the redelivery ran the effect again (an idempotency key not honoured). */
  | 'redelivery-after-crash'
  /** The inbox record expired before a redelivery: the deduplication window is shorter than the redelivery's delay. */
  | 'deduplication-window-expired'
  /**
   * A lease or multi-step consumer's lease (`IEF_LEASE_DURATION_SECONDS` overridden, or `leaseDurationSeconds` set in
   * the handler's `config`) outlasted the queue's visibility
   * timeout: each redelivery of a message whose delivery ended unfinished found the lease still live and spent a receive,
   * until SQS moved the message to the dead-letter queue.
   */
  | 'lease-outlasts-redelivery'
  /** An aggregate consumer located its item from something other than the event, so a redelivery wrote another item. */
  | 'aggregate-key-differs'
  /**
   * The handler kept state between attempts or invocations (a module-level cache written back, a set of the ids it saw),
   * so one commit carried several runs' work, or lacked the work an earlier run kept in memory (a count too low).
   */
  | 'state-kept-between-attempts'
  /**
   * A consumer's commit wrote an item with a value computed from its own read of it, without a condition, and another
   * invocation wrote the item between the read and the commit: that write was lost (a count too low).
   */
  | 'lost-update'
  /** A producer drew a new event id on each attempt: one command committed under two ids. */
  | 'event-id-per-attempt'
  /**
   * A producer wrote a business change and its event in separate writes (the change, then a publish or an outbox write
   * of its own, or the other way round): a crash, a lost response or a retry between them left one without the other.
   */
  | 'change-and-event-written-apart'
  /**
   * An app function other than the flow's relay (the ordered path's fan-out) published an event to a flow's event topic
   * with its own SNS client: written apart from the change (no outbox committed it, or one did and it reaches the topic twice).
   */
  | 'published-to-event-topic'
  /**
   * A lease consumer's handler called an outside service (HTTP) before the runtime claimed the lease, or after it ended,
   * instead of in `handle`: a redelivery repeats the call, whatever the lease recorded.
   */
  | 'effect-outside-lease'
  /** A multi-step consumer's handler called an outside service (HTTP) outside its steps: a redelivery repeats the call. */
  | 'effect-outside-step'
  /** Applied again, and the run shows by which invocation, not why. */
  | 'applied-again'
  /**
   * A subscriber's filter policy (the `setting`, `filterPolicy`) does not take a type the scenario says it consumes
   * (`consumes`): those events reached the topic and never its queue.
   */
  | 'filter-drops-consumed-type'
  /**
   * Events of a type the scenario expects consumed (`expectConsumed`) reached the topic and no subscription's filter
   * policy took them (`eventType`): no filter names the type, or the producer sends a type none names.
   */
  | 'no-filter-takes-expected-type'
  /**
   * Events of a type the scenario names neither in `expectConsumed` nor in `publishedOutside` (`eventType`), though it
   * names the types it expects consumed, reached the topic and no subscription's filter policy took them.
   */
  | 'undeclared-type-untaken'
  /**
   * A transactional consumer acknowledged events (their messages deleted from its queue) whose inbox record it never
   * committed: the handler acknowledged records the runtime did not commit, e.g. a wrapper swallowing its failures.
   */
  | 'acknowledged-uncommitted'
  /**
   * A subscriber's queue has a `maxReceiveCount` below 5, the least AWS recommends for a queue Lambda reads, and every
   * failed receive of a valid event's message failed at a fault the run injected (a crash, a throttle, a transaction
   * conflict): transient failures, as AWS has, used up its receives and SQS moved it to the dead-letter queue.
   */
  | 'few-receives'
  /**
   * The scenario's operator resolved a lease or multi-step consumer's blocked step `TRY_AGAIN` although its effect had
   * been applied: the redelivery it allowed ran the effect again. The operator's decision is the mistake, whatever
   * fault blocked the step.
   */
  | 'operator-retried-applied-step'
  /**
   * An aggregate consumer applied an event again because its aggregate's processed list had forgotten it: at least as
   * many newer events of the aggregate were applied between its first application and the redelivery as the list keeps
   * (`maxProcessedMessages`, the setting; the newer events applied, its `newerApplied`). Aggregate mode's documented
   * bound, not a mistake in the handler: the list is too short for the events the aggregate receives within a
   * redelivery's delay, or those events are a flood a mistake upstream sent (named after this cause when the run shows it).
   */
  | 'processed-list-overrun';

/** An invocation of a function, as the report numbers it (per function, in the order invocations ended). */
export interface InvocationReference {
  /** `invocation #N` of the function. */
  readonly number: number;
  /** The receive count of the event's message in it (1 = first delivery). @default unknown */
  readonly receive?: number;
  /** Simulated seconds from the start of the run to the invocation's end. */
  readonly atSeconds: number;
  /**
   * Its part in the cause: `applied` (the first application), `applied-again`, `not-applied` (its commit failed), or
   * `overwritten` (another execution environment's invocation whose write the applied commit overwrote from a stale copy).
   */
  readonly role: 'applied' | 'applied-again' | 'not-applied' | 'overwritten';
}

/** DynamoDB requests of a cause: an operation on tables, how many, and the fault the simulator injected on them. */
export interface RequestReference {
  readonly operation: string;
  readonly tables: readonly string[];
  readonly count: number;
  /** The injected fault: `lose-response` (applied, reply lost), `conflict`, `throttle`, `crash-before`... @default none */
  readonly fault?: string;
}

/**
 * HTTP calls of a cause, to a service outside the simulator (the app's own, e.g. a payment provider): a method, host
 * and path, how many the invocations of the cause made, and where they stood against the runtime's lease.
 */
export interface CallReference {
  readonly method: string;
  /** `host:port`. */
  readonly host: string;
  /** Without the query string. */
  readonly path: string;
  readonly count: number;
  /**
   * `before-claim`: before the runtime's first write of the event's processing record (the lease claim);
   * `after-lease`: after the runtime's writes began, with no lease held (completed, released, or a claim refused).
   */
  readonly when: 'before-claim' | 'after-lease';
}

/**
 * A command of a producer the run drove, committed twice: its number among the scenario's commands (counted from 1, in
 * the order the scenario lists them), and the attempt that committed it first and the one that committed it again (the
 * same attempt when the producer retried its own write inside the invocation).
 */
export interface CommandReference {
  /** The command's number, counted from 1 in the scenario's order. */
  readonly number: number;
  /** The attempt (counted from 1) whose commit is kept. */
  readonly committedAt: number;
  /** The attempt that committed it again. */
  readonly committedAgainAt: number;
}

/** A setting of the app the cause lies in: its name, the value the run used, and what the run showed of the value it needs. */
export interface SettingReference {
  readonly name: string;
  /** A number in its unit, or for a filter policy (`filterPolicy`) the policy as the subscription has it. */
  readonly value: number | Readonly<Record<string, unknown>>;
  /** For a filter policy: what it applies to, `MessageBody` or `MessageAttributes`. @default none */
  readonly scope?: 'MessageBody' | 'MessageAttributes';
  /** For a filter policy: the event type it does not take. @default none */
  readonly type?: string;
  /**
   * The most the setting may be, in its unit, where the run can tell it: for a lease, the visibility timeout less the
   * runtime's clock-skew allowance. @default none (a deduplication window: the least it needs is not the run's to tell;
   * the construct's own rule is retention and more, see `observedDelay`)
   */
  readonly needed?: number;
  /** The least the setting should be, in its unit: for a queue's `maxReceiveCount`, the 5 AWS recommends. @default none */
  readonly least?: number;
  /**
   * For a deduplication window: the delay of the redelivery the run met, in seconds, which the window did not cover. A
   * delay this run happened to take, not a value to set: the window must cover every redelivery (the queue's retention
   * and more, as the construct checks). @default none
   */
  readonly observedDelay?: number;
  /**
   * For an aggregate's `maxProcessedMessages`: how many newer events of the aggregate were applied between the event's
   * first application and the redelivery applied again, which pushed it out of the list. @default none
   */
  readonly newerApplied?: number;
}

/** An aggregate item of an aggregate consumer: its table, as the run's requests name it, and its key. */
export interface AggregateReference {
  readonly table: string;
  /** The item's key attributes and their values, e.g. `{ "pk": "CUSTOMER#1" }`. */
  readonly key: Readonly<Record<string, unknown>>;
}

/** Why a violation happened, and what to change (see the module comment). */
export interface ViolationCause {
  readonly kind: CauseKind;
  /** The subscriber whose consumer did it. @default none (a producer's cause) */
  readonly subscriber?: string;
  /** The producer whose command did it. @default none (a subscriber's cause) */
  readonly producer?: string;
  /** The events concerned. */
  readonly eventIds: readonly string[];
  /** The invocations that applied the effect (again), in order. Empty when the cause is not tied to invocations. */
  readonly invocations: readonly InvocationReference[];
  /** The requests that show it (the write outside the transaction, the call whose response was lost...). */
  readonly requests: readonly RequestReference[];
  /** The HTTP calls outside the simulator that show it (a call made outside the lease or a step). @default none */
  readonly calls?: readonly CallReference[];
  /**
   * The event the subscriber received that it committed a follow-up of more than once, for a follow-up committed again
   * by a redelivery (`follow-up-committed-twice`; `eventIds` are then the follow-ups, the kept one first). @default none
   */
  readonly receivedEventId?: string;
  /** The producer's command it lies in, for a producer's cause. @default none */
  readonly command?: CommandReference;
  /** The setting it lies in. @default none */
  readonly setting?: SettingReference;
  /** The event type it concerns, for a type no subscription took. @default none */
  readonly eventType?: string;
  /** The aggregate it lies in, for an aggregate's processed list that forgot an event (`processed-list-overrun`). @default none */
  readonly aggregate?: AggregateReference;
  /** The change to make, in a sentence. */
  readonly fix: string;
}

/** A violation a check found, with its causes when the check can tell them (the result keeps causes apart: `SimulationResult.causes`). */
export interface CausedViolations {
  /** The violation's index in `SimulationResult.violations`. */
  readonly violation: number;
  readonly causes: readonly ViolationCause[];
}

/** The change to make, per kind of cause. */
const FIXES: Record<CauseKind, string> = {
  'write-outside-transaction': 'write through the transaction (tx.put, tx.update, tx.delete; in an aggregate, return the state from apply()), never with a client of your own',
  'outbox-write-outside-transaction': 'publish the follow-up event with tx.emit, in the consumer\'s transaction, not with an outbox write of your own',
  'lost-response-retried': 'classify an unknown outcome (a lost response, a timeout) of the effect\'s call as not retryable, or pass an idempotency key the called API honours',
  'sdk-retry-after-lost-response': 'make the step\'s write idempotent (a condition on a per-event marker, SET of a computed value instead of ADD), or write it through the transaction',
  'redelivery-after-crash': 'pass the idempotency key to an API that honours it, or do not take over an expired lease (onExpiredLease: \'block\')',
  'deduplication-window-expired': 'remove the override of the deduplication window: it must cover every redelivery (the construct\'s default does)',
  'lease-outlasts-redelivery':
    'remove the override of the lease duration: leaseDuration plus the runtime\'s 5 s clock-skew allowance must stay below the queue\'s visibility timeout, so a redelivery after a crash takes the lease over (the construct checks this when leaseDuration is set through its props)',
  'aggregate-key-differs': 'locate the aggregate from the event (its subject or data), never from the processing time or other state',
  'state-kept-between-attempts': 'compute each write from the event and what the transaction reads, never from a module-level cache',
  'lost-update': 'compute the write from what the item holds when the transaction commits: ADD, or SET a = a + :n, or a condition on the value read (a ConditionExpression in tx.update), never a value computed from an earlier read',
  'event-id-per-attempt': 'derive the event id from the command (e.g. order-placed-<orderId>) so every attempt writes the same event',
  'change-and-event-written-apart':
    "write the business change and its events in one transaction (the Outbox's transactWrite or transactWriteOnce with the change's items), never the change first and the event after (a publish, or an outbox write of its own), nor the other way round",
  'published-to-event-topic':
    "emit the event in the transaction that commits the change (tx.emit in a consumer; the Outbox's transactWrite or transactWriteOnce with the change's items in a producer), never publish to the flow's event topic yourself: the relay publishes what the outbox commits",
  'effect-outside-lease':
    "move the call inside the lease's handle (createLeaseConsumer's handle, passing context.idempotencyKey), never before the consumer runs or after it returns: a redelivery repeats a call made outside it",
  'effect-outside-step':
    'move the call into a step (a step of createMultiStepConsumer, passing context.idempotencyKey), never before the consumer runs or after it returns: a redelivery repeats a call made outside a step',
  'applied-again': 'make the effect idempotent: write through the transaction, or key the external call by the event id',
  'filter-drops-consumed-type': "add the type to the subscriber's filter policy, or remove it from the scenario's consumes for that subscriber if it does not need it",
  'no-filter-takes-expected-type': 'add the type to the filter policy of the subscriber that should consume it, or have the producer send a type a filter policy takes',
  'undeclared-type-untaken':
    "add the type to the filter policy of the subscriber that should consume it and to the scenario's expectConsumed, or to its publishedOutside if consumers outside this app take it",
  'acknowledged-uncommitted':
    "report every record the runtime did not commit in batchItemFailures, on every receive, the last included (SQS then moves the message to the dead-letter queue, from where it can be redriven): return the runtime's own batch response (a wrapper that answers { batchItemFailures: [] }, or drops a record at its last receive, deletes the failed records' messages)",
  'few-receives': "raise maxReceiveCount to 5 or more (the constructs' default is 5)",
  'operator-retried-applied-step':
    "have the scenario's operator decide a blocked step from where its effect lands (the table or service the step writes to): TRY_AGAIN only when the effect is not there, SUCCESS when it is",
  'processed-list-overrun':
    `raise maxProcessedMessages (createAggregateConsumer's option, default ${PROCESSED_MESSAGES_LIMITS.DEFAULT}) above the number of events one aggregate receives within a redelivery's delay; ` +
    'when those events are more than the app should send (a mistake upstream, named after this cause), mend the upstream first',
};

/**
 * The change to make, for a kind whose fix depends on the consumer's processing mode: a lease or multi-step consumer
 * has no transaction to write through; a lease has its handle, a multi-step consumer its steps.
 */
const MODE_FIXES: Partial<Record<CauseKind, Readonly<Record<string, string>>>> = {
  'sdk-retry-after-lost-response': {
    lease: "make the write in the lease's handle idempotent (a condition on a per-event marker, SET of a computed value instead of ADD)",
    'multi-step': "make the step's write idempotent (a condition on a per-event marker, SET of a computed value instead of ADD)",
  },
  'applied-again': {
    lease: "make the lease's effect idempotent: pass context.idempotencyKey to an API that honours it, or write with a condition on a per-event marker",
    'multi-step': "make the step's effect idempotent: pass context.idempotencyKey to an API that honours it, or write with a condition on a per-event marker",
  },
};

/** Every kind of cause, in the order of {@link CauseKind} (docs/SIMULATOR.md, "Causes, as fields", has a row for each). */
export const CAUSE_KINDS = Object.keys(FIXES) as readonly CauseKind[];

/**
 * The fix the report names for a kind of cause; `mode`, the consumer's processing mode (`IEF_PROCESSING_MODE`), words
 * it for that mode where the fix depends on it. @param mode @default the fix for any mode
 */
export function fixFor(kind: CauseKind, mode?: string): string {
  return (mode === undefined ? undefined : MODE_FIXES[kind]?.[mode]) ?? FIXES[kind];
}

