/** Rule: every dead-letter queue holding dead letters is watched by an alarm of the templates (../unwatched-dead-letters.ts). */
import type { RunWideCheck } from '../run-check';
import { checkUnwatchedDeadLetters } from '../unwatched-dead-letters';

export const unwatchedDeadLettersRule: RunWideCheck = {
  name: 'unwatched-dead-letters',
  checks: 'every dead-letter queue that holds dead letters is watched by a CloudWatch alarm of the templates',
  scope: 'run',
  check: (facts) => checkUnwatchedDeadLetters(facts.deadLetterQueues, facts.model.queueAlarms),
};
