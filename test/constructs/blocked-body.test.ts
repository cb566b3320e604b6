import { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, test } from 'vitest';
import { ENV } from '../../lambda/contract/environment';
import { IdempotentEventFlow, ProcessingMode } from '../../lib';
import { HANDLER_ENTRY, newStack } from '../fixtures/construct-test-kit';

function variables(template: Template): Record<string, unknown> {
  const functions = Object.values(template.findResources('AWS::Lambda::Function')) as Array<{ Properties: { Environment: { Variables: Record<string, unknown> } } }>;
  expect(functions).toHaveLength(1);
  return functions[0]!.Properties.Environment.Variables;
}

describe('keepBlockedMessageBody', () => {
  test.each([ProcessingMode.LEASE, ProcessingMode.MULTI_STEP])('in mode %s, the body is not kept by default (no variable)', (processingMode) => {
    const stack = newStack();
    new IdempotentEventFlow(stack, 'Orders').addSubscriber('Billing', { entry: HANDLER_ENTRY, processingMode });
    expect(variables(Template.fromStack(stack))).not.toHaveProperty(ENV.KEEP_BLOCKED_MESSAGE_BODY);
  });

  test('when chosen, tells the runtime to keep it', () => {
    const stack = newStack();
    new IdempotentEventFlow(stack, 'Orders').addSubscriber('Billing', { entry: HANDLER_ENTRY, processingMode: ProcessingMode.LEASE, keepBlockedMessageBody: true });
    expect(variables(Template.fromStack(stack))[ENV.KEEP_BLOCKED_MESSAGE_BODY]).toBe('true');
  });

  test.each([ProcessingMode.TRANSACTIONAL, ProcessingMode.AGGREGATE])('fails at synth in mode %s, which never blocks', (processingMode) => {
    const stack = newStack();
    const flow = new IdempotentEventFlow(stack, 'Orders');
    expect(() => flow.addSubscriber('Billing', { entry: HANDLER_ENTRY, processingMode, keepBlockedMessageBody: true })).toThrow(
      /keepBlockedMessageBody can only be used with processingMode .*LEASE.*MULTI_STEP.*but it was provided with/,
    );
  });

  test('may not be set through environment', () => {
    const stack = newStack();
    const flow = new IdempotentEventFlow(stack, 'Orders');
    expect(() =>
      flow.addSubscriber('Billing', { entry: HANDLER_ENTRY, processingMode: ProcessingMode.LEASE, environment: { [ENV.KEEP_BLOCKED_MESSAGE_BODY]: 'true' } }),
    ).toThrow(`environment must not set ${ENV.KEEP_BLOCKED_MESSAGE_BODY}`);
  });
});
