/**
 * Review r8 (issue 40's synth rule: leaseDuration + the runtime's 5 s clock-skew allowance < visibilityTimeout). The
 * rule is checked only on a leaseDuration the user gives; the default leaseDuration (the function's timeout) is not
 * checked. At timeout 1 s the default queue's visibilityTimeout is 6 s (6 x timeout) and the default lease is 1 s:
 * 1 + 5 = 6, not less than 6, the very case the rule refuses when the same lease is given explicitly. Failed on
 * s8-rv8 (27b8873) when committed. Synth only.
 */
import { Duration } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as sns from 'aws-cdk-lib/aws-sns';
import { describe, expect, test } from 'vitest';
import { ProcessingMode, Subscriber } from '../../lib/consumer';
import { ENV } from '../../lambda/contract/environment';
import { HANDLER_ENTRY, newStack } from '../fixtures/construct-test-kit';

function subscriber(leaseDuration?: Duration): () => Template {
  return () => {
    const stack = newStack();
    new Subscriber(stack, 'Billing', {
      topic: new sns.Topic(stack, 'Topic'),
      entry: HANDLER_ENTRY,
      processingMode: ProcessingMode.LEASE,
      timeout: Duration.seconds(1),
      ...(leaseDuration === undefined ? {} : { leaseDuration }),
    });
    return Template.fromStack(stack);
  };
}

describe('review r8: the lease/visibility rule and the default lease', () => {
  test('R8-6: the default leaseDuration (the timeout, 1 s) against the default visibilityTimeout (6 s) is refused, as the same lease given explicitly is', () => {
    // GIVEN the same lease, 1 s, given explicitly: refused (1 + 5 is not below 6)
    expect(subscriber(Duration.seconds(1))).toThrow(/leaseDuration must be less than visibilityTimeout less the runtime's 5 s clock-skew allowance/);

    // WHEN it is left to its default (the function's timeout, 1 s), THEN it is refused too; instead synth deploys a
    // 1 s lease on a 6 s queue, the case the rule exists for (a redelivery after a crash finds the lease held)
    let template: Template | undefined;
    let refusal: unknown;
    try {
      template = subscriber()();
    } catch (error) {
      refusal = error;
    }
    const deployed = template === undefined ? undefined : {
      lease: Object.values(template.findResources('AWS::Lambda::Function')).map((fn) => (fn as { Properties: { Environment?: { Variables?: Record<string, unknown> } } }).Properties.Environment?.Variables?.[ENV.LEASE_DURATION_SECONDS]).find((value) => value !== undefined),
      visibility: Object.values(template.findResources('AWS::SQS::Queue')).map((queue) => (queue as { Properties: { VisibilityTimeout?: number } }).Properties.VisibilityTimeout).find((value) => value !== undefined),
    };
    expect(refusal, `synth accepted it: ${JSON.stringify(deployed)}`).toBeInstanceOf(Error);
  });
});
