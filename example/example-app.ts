import type { App, Environment } from 'aws-cdk-lib';
import { LoyaltyExampleStack } from './loyalty-example-stack';
import { OrdersExampleStack, OrdersExampleStackProps } from './orders-example-stack';

/**
 * The example's test environments (no AWS account is reached: `cdk synth` and the simulator need none). The orders
 * team's account runs the flow and five subscribers; the loyalty team's account, a second account in the same Region,
 * runs one subscriber of it (docs/CROSS-ACCOUNT.md).
 */
export const EXAMPLE_ENVIRONMENTS = {
  orders: { account: '111111111111', region: 'eu-west-1' },
  loyalty: { account: '222222222222', region: 'eu-west-1' },
} as const satisfies Record<string, Required<Pick<Environment, 'account' | 'region'>>>;

/** The example's stacks, as bin/example-app.ts creates them. */
export interface ExampleStacks {
  readonly orders: OrdersExampleStack;
  readonly loyalty: LoyaltyExampleStack;
}

/**
 * Adds the example's stacks to `app`: `IdempotentEventFlowExample` (the orders account) and
 * `IdempotentEventFlowExampleLoyalty` (the loyalty account, subscribing to the orders flow).
 */
export function addExampleStacks(app: App, props: Pick<OrdersExampleStackProps, 'removalPolicy'> = {}): ExampleStacks {
  const orders = new OrdersExampleStack(app, 'IdempotentEventFlowExample', {
    ...props,
    env: EXAMPLE_ENVIRONMENTS.orders,
    description:
      'idempotent-event-flow example: orders (outbox) -> billing (transactional, emits OrderBilled), invoicing (multi-step), ' +
      'notifications (lease), shipping (transactional, filtered); OrderBilled -> customer stats (aggregate) and loyalty ' +
      '(another account); fulfilment steps (ordered outbox, FIFO per order) -> order tracking (ordered)',
  });
  const loyalty = new LoyaltyExampleStack(app, 'IdempotentEventFlowExampleLoyalty', {
    ...props,
    flow: orders.flow,
    env: EXAMPLE_ENVIRONMENTS.loyalty,
    description: 'idempotent-event-flow example, the loyalty team\'s account: OrderBilled (from the orders account) -> loyalty points (transactional)',
  });
  return { orders, loyalty };
}
