/**
 * Type-level test of `createAggregateConsumer`'s state type (issue 12, item 5): a plain TypeScript `interface` is
 * accepted as `TState` (it has no index signature, so `TState extends Record<string, unknown>` refused it with TS2344),
 * and the state stays type-checked. Nothing here runs: `tsc -p tsconfig.json --noEmit` (the first step of `npm test`)
 * compiles it, and each `@ts-expect-error` fails the compile when its line stops being an error.
 */
import { createAggregateConsumer, type AggregateHandler, type SqsBatchHandler } from '../../lambda/index';

interface Deposit {
  readonly accountId: string;
  readonly amountCents: number;
}

/** As a user declares state: a plain interface, no index signature, no `extends Record<string, unknown>`. */
interface Account {
  readonly balanceCents: number;
  readonly deposits: number;
  readonly owner?: string;
}

const locate = (envelope: { readonly data: Deposit }) => ({ tableName: 'Accounts', key: { pk: `ACCOUNT#${envelope.data.accountId}` } });

/** A plain interface state with explicit type arguments. */
export const explicit: SqsBatchHandler = createAggregateConsumer<Deposit, Account>({
  locate,
  apply: (current, envelope) => ({
    state: { balanceCents: (current?.balanceCents ?? 0) + envelope.data.amountCents, deposits: (current?.deposits ?? 0) + 1 },
  }),
});

/** A plain interface state inferred from a typed handler. */
const applyDeposit: AggregateHandler<Deposit, Account> = (current, envelope) => ({
  state: { ...current, balanceCents: (current?.balanceCents ?? 0) + envelope.data.amountCents, deposits: (current?.deposits ?? 0) + 1 },
});
export const inferred: SqsBatchHandler = createAggregateConsumer({ locate, apply: applyDeposit });

/** The handler sees the declared state (or undefined for a new aggregate), not `unknown` or an index signature. */
export const seesDeclaredState: AggregateHandler<Deposit, Account> = (current) => {
  const balance: number | undefined = current?.balanceCents;
  // @ts-expect-error an attribute the interface does not declare is not readable
  void current?.overdraftLimitCents;
  return { state: { balanceCents: balance ?? 0, deposits: 0 } };
};

/** Type safety is kept: the state `apply` returns must be the declared one. */
export const wrongAttributeType: SqsBatchHandler = createAggregateConsumer<Deposit, Account>({
  locate,
  // @ts-expect-error balanceCents must be a number
  apply: () => ({ state: { balanceCents: 'ten', deposits: 1 } }),
});

export const missingAttribute: SqsBatchHandler = createAggregateConsumer<Deposit, Account>({
  locate,
  // @ts-expect-error deposits is required by Account
  apply: () => ({ state: { balanceCents: 10 } }),
});

/** A primitive is not an item's attributes: the constraint still refuses it. */
// @ts-expect-error TState must be an object type
export const primitiveState: SqsBatchHandler = createAggregateConsumer<Deposit, string>({ locate, apply: () => ({ state: 'balance' }) });

/** The default state type, for handlers that do not declare one, is still a plain record. */
export const untyped: SqsBatchHandler = createAggregateConsumer<Deposit>({
  locate,
  apply: (current) => ({ state: { ...current, touched: true } }),
});
