/** Rule: no app function but a flow's relay published to a flow's event topic (../own-publishes.ts), probe or not. */
import type { RunWideCheck } from '../run-check';

export const ownPublishesRule: RunWideCheck = {
  name: 'published-to-event-topic',
  checks: "no app function other than a flow's relay published to a flow's event topic with its own SNS client",
  scope: 'run',
  check: (facts) => facts.ownPublishes ?? [],
};
