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
  const operations = operationsOf(action);
  return operations.length === 1 ? operations[0] : undefined;
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
