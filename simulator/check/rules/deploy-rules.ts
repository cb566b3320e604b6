/** Rule: the templates break no rule AWS enforces at deploy (../deploy-rules.ts). */
import { checkDeployRules } from '../deploy-rules';
import type { RunWideCheck } from '../run-check';

export const deployRulesRule: RunWideCheck = {
  name: 'deploy-refused',
  checks: 'the templates break no rule AWS enforces at deploy',
  scope: 'run',
  check: (facts) => checkDeployRules(facts.model),
};
