/** What a consumer's handler stages; committed together with the inbox record. */
import type {
  TransactWriteConditionCheck,
  TransactWriteDelete,
  TransactWriteItem,
  TransactWritePut,
  TransactWriteUpdate,
} from '@aws-sdk/lib-dynamodb';
import { TransactionLimitError } from '../errors';
import { MAX_TRANSACTION_ACTIONS } from '../transaction/limits';

/** How many writes a handler may stage: one action of the transaction is the inbox record. */
export const MAX_STAGED_WRITES = MAX_TRANSACTION_ACTIONS - 1;

/**
 * Collects a handler's writes (DocumentClient-style params). Nothing is sent until the handler returns; then the
 * writes and the inbox record are committed in one TransactWriteItems call, so they happen exactly once together.
 */
export class TransactionBuilder {
  private readonly staged: TransactWriteItem[] = [];

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

  /** The staged actions, in staging order. */
  public get items(): readonly TransactWriteItem[] {
    return this.staged;
  }

  private stage(action: TransactWriteItem): void {
    if (this.staged.length >= MAX_STAGED_WRITES) {
      // fail at the handler's own line rather than at commit
      throw new TransactionLimitError(
        `a handler may stage at most ${MAX_STAGED_WRITES} writes (DynamoDB allows ${MAX_TRANSACTION_ACTIONS} actions per transaction and the inbox record takes one), but it staged write number ${this.staged.length + 1}`,
      );
    }
    this.staged.push(action);
  }
}
