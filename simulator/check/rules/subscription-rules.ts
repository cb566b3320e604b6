/** Rule: each subscription across accounts or Regions is one AWS creates, confirms and gives its dead-letter queue (../subscription-rules.ts). */
import type { RunWideCheck } from '../run-check';
import { checkSubscriptionRules } from '../subscription-rules';

export const subscriptionRulesRule: RunWideCheck = {
  name: 'subscription-placement',
  checks: 'each subscription across accounts or Regions is created in its topic\'s Region by the queue\'s account, its dead-letter queue beside it',
  scope: 'run',
  check: (facts) => checkSubscriptionRules(facts.model),
};
