/** What a consumer's handler stages; committed together with the inbox record. */
import type {
  TransactWriteConditionCheck,
  TransactWriteDelete,
  TransactWriteItem,
  TransactWritePut,
  TransactWriteUpdate,
} from '@aws-sdk/lib-dynamodb';
import type { EventEnvelope } from '../envelope';
import { TransactionLimitError } from '../errors';
import type { NewEvent } from '../producer/new-event';
import { noOutboxError, type EventPreparer } from '../producer/emitted-events';
import type { PreparedEvent } from '../producer/outbox';
import { MAX_TRANSACTION_ACTIONS } from '../transaction/limits';

/** How many writes and events a handler may stage together: one action of the transaction is the inbox record. */
export const MAX_STAGED_WRITES = MAX_TRANSACTION_ACTIONS - 1;

/** Options of {@link TransactionBuilder}. */
export interface TransactionBuilderOptions {
  /** Prepares emitted events (the runtime supplies it, see `emittedEventPreparer`). @default `emit` throws: there is nowhere to emit to */
  readonly prepareEvent?: EventPreparer;
}

/**
 * Collects a handler's writes (DocumentClient-style params) and the events it emits. Nothing is sent until the handler
 * returns; then the writes, the events' outbox items and the inbox record are committed in one TransactWriteItems
 * call, so they happen exactly once together.
 */
export class TransactionBuilder {
  private readonly staged: TransactWriteItem[] = [];
  private readonly emitted: PreparedEvent[] = [];

  public constructor(private readonly options: TransactionBuilderOptions = {}) {}

  /** Stages a Put. */
  public put(params: TransactWritePut): void {
    this.stage({ Put: params });
  }

  /** Stages an Update. */
  public update(params: TransactWriteUpdate): void {
    this.stage({ Update: params });
  }

  /** Stages a Delete. */
  public delete(params: TransactWriteDelete): void {
    this.stage({ Delete: params });
  }

  /** Stages a condition that must hold for the transaction to commit (it writes nothing). */
  public conditionCheck(params: TransactWriteConditionCheck): void {
    this.stage({ ConditionCheck: params });
  }

  /**
   * Emits a new event in the same transaction: its outbox item commits with the staged writes and the inbox record,
   * or not at all. Its id defaults to one derived from the subscriber, the consumed event's id and the emit's position,
   * so a re-run of the same message names its events the same and can never publish a second copy.
   * Returns the event's envelope (with its id).
   *
   * @throws InvalidEventError (the message is dead-lettered) when the subscriber has no outbox, or the event is invalid
   * @throws EventTooLargeError when the event does not fit a message or an item
   */
  public emit<TData>(event: NewEvent<TData>): EventEnvelope<TData> {
    this.assertRoom('event');
    if (this.options.prepareEvent === undefined) throw noOutboxError(event.type);
    const prepared = this.options.prepareEvent(event, this.emitted.length) as PreparedEvent<TData>;
    this.emitted.push(prepared);
    return prepared.envelope;
  }

  /** The staged actions, in staging order (emitted events not included; see {@link TransactionBuilder.events}). */
  public get items(): readonly TransactWriteItem[] {
    return this.staged;
  }

  /** The emitted events, in emit order. */
  public get events(): readonly PreparedEvent[] {
    return this.emitted;
  }

  private stage(action: TransactWriteItem): void {
    this.assertRoom('write');
    this.staged.push(action);
  }

  private assertRoom(what: 'write' | 'event'): void {
    const used = this.staged.length + this.emitted.length;
    if (used >= MAX_STAGED_WRITES) {
      // fail at the handler's own line rather than at commit
      throw new TransactionLimitError(
        `a handler may stage at most ${MAX_STAGED_WRITES} writes and events together (DynamoDB allows ${MAX_TRANSACTION_ACTIONS} actions per transaction and the inbox record takes one), ` +
          `but it staged ${what} number ${used + 1} (${this.staged.length} writes and ${this.emitted.length} events before it)`,
      );
    }
  }
}
