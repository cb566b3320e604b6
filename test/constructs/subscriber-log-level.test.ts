/**
 * `applicationLogLevel` of a Subscriber reaches its consumer function's LoggingConfig (it was silently dropped), and
 * the consumer's metric lines are written so that Lambda keeps them at that level (test/lambda/metrics-log-level.test.ts).
 */
import { Match, Template } from 'aws-cdk-lib/assertions';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as sns from 'aws-cdk-lib/aws-sns';
import { describe, test } from 'vitest';
import { Subscriber } from '../../lib/consumer';
import { HANDLER_ENTRY, newStack } from '../fixtures/construct-test-kit';

function template(applicationLogLevel?: lambda.ApplicationLogLevel): Template {
  const stack = newStack();
  const topic = new sns.Topic(stack, 'Topic');
  new Subscriber(stack, 'Billing', { topic, entry: HANDLER_ENTRY, ...(applicationLogLevel === undefined ? {} : { applicationLogLevel }) });
  return Template.fromStack(stack);
}

describe('Subscriber: applicationLogLevel', () => {
  test.each([lambda.ApplicationLogLevel.WARN, lambda.ApplicationLogLevel.DEBUG])('%s becomes the consumer function\'s LoggingConfig.ApplicationLogLevel', (level) => {
    template(level).hasResourceProperties('AWS::Lambda::Function', { LoggingConfig: { LogFormat: 'JSON', ApplicationLogLevel: level } });
  });

  test('not set: the function has no application log level (Lambda\'s default, INFO)', () => {
    template().hasResourceProperties('AWS::Lambda::Function', { LoggingConfig: { LogFormat: 'JSON', ApplicationLogLevel: Match.absent() } });
  });
});
