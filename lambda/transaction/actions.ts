/** Helpers that look inside DocumentClient-style TransactWriteItems actions. */
import type { TransactWriteItem } from '@aws-sdk/lib-dynamodb';

/** The operation of one TransactWriteItems action. */
export type TransactionOperation = 'Put' | 'Update' | 'Delete' | 'ConditionCheck';

const OPERATIONS: readonly TransactionOperation[] = ['Put', 'Update', 'Delete', 'ConditionCheck'];

/** The operations present on an action (a valid action has exactly one). */
export function operationsOf(action: TransactWriteItem): TransactionOperation[] {
  return OPERATIONS.filter((operation) => action[operation] !== undefined);
}

/** The single operation of a valid action, or `undefined` when it has none or several. */
export function operationOf(action: TransactWriteItem): TransactionOperation | undefined {
  // a loop, not operationsOf: it runs several times for every action of every commit
  let found: TransactionOperation | undefined;
  for (const operation of OPERATIONS) {
    if (action[operation] === undefined) continue;
    if (found !== undefined) return undefined;
    found = operation;
  }
  return found;
}

/** The table an action targets. */
export function tableOf(action: TransactWriteItem): string | undefined {
  const operation = operationOf(action);
  return operation === undefined ? undefined : action[operation]?.TableName;
}

/** A short human description of an action, e.g. `Update on table 'Ledger'`. */
export function describeAction(action: TransactWriteItem): string {
  const operation = operationOf(action) ?? 'invalid action';
  const table = tableOf(action);
  return table === undefined ? operation : `${operation} on table '${table}'`;
}
