/** Which dead-letter reasons are configuration or deployment errors, read from the explanations the run writes. */
import { describe, expect, test } from 'vitest';
import { configurationErrorIn, failureNamedIn } from '../../../simulator/check/configuration-errors';
import { describeFailure } from '../../../simulator/observation/observer';

const movedBySqs = (lastFailure: string): string => `moved by SQS after 3 receives; last failure: ${lastFailure}`;

describe('configurationErrorIn', () => {
  test.each([
    ['Runtime.HandlerNotFound', movedBySqs(describeFailure({ kind: 'threw', errorName: 'Runtime.HandlerNotFound', errorMessage: 'index.nope is undefined or not exported', atInit: true })!)],
    ['Runtime.ImportModuleError', movedBySqs(describeFailure({ kind: 'threw', errorName: 'Runtime.ImportModuleError', errorMessage: "Error: Cannot find module 'index'", atInit: true })!)],
    ['Runtime.UserCodeSyntaxError', movedBySqs(describeFailure({ kind: 'threw', errorName: 'Runtime.UserCodeSyntaxError', errorMessage: 'SyntaxError: Unexpected token', atInit: true })!)],
    ['ConfigurationError', movedBySqs(describeFailure({ kind: 'threw', errorName: 'ConfigurationError', errorMessage: 'IEF_INBOX_TABLE_NAME is not set', atInit: true })!)],
    ['TypeError at initialization', movedBySqs(describeFailure({ kind: 'threw', errorName: 'TypeError', errorMessage: 'x is not a function', atInit: true })!)],
    ['AccessDeniedException', movedBySqs('the runtime reported: AccessDeniedException: User is not authorized to perform: dynamodb:TransactWriteItems')],
    ['ConfigurationError', 'ConfigurationError: createLeaseConsumer: handle must be a function'],
    ['ResourceNotFoundException', movedBySqs('the invocation threw ResourceNotFoundException: Requested resource not found')],
  ])('names %s in %j', (expected, explanation) => {
    expect(configurationErrorIn(explanation)).toBe(expected);
  });

  test.each([
    ['a schema failure the runtime dead-lettered', 'SchemaValidationError: event e-1 failed the subscriber\'s schema: totalCents'],
    ['a blocked step', 'MessageBlockedError: the outcome of step create-invoice is unknown'],
    ['an error thrown while handling an event', movedBySqs(describeFailure({ kind: 'threw', errorName: 'TypeError', errorMessage: 'x is not a function' })!)],
    ['a crash', movedBySqs(describeFailure({ kind: 'crashed', atRequest: 2, afterCommit: true })!)],
    ['a timeout', movedBySqs(describeFailure({ kind: 'timed-out', timeoutSeconds: 30 })!)],
    ['a lost delete', movedBySqs('handled, but its delete was lost (an injected fault)')],
    ['no explanation', undefined],
  ])('names none for %s', (_name, explanation) => {
    expect(configurationErrorIn(explanation)).toBeUndefined();
  });
});

describe('failureNamedIn', () => {
  test('reads the error name and whether it was thrown while the handler loaded', () => {
    expect(failureNamedIn(movedBySqs("the function's initialization (cold start) threw Error: boom"))).toEqual({ errorName: 'Error', atInit: true });
    expect(failureNamedIn(movedBySqs('the runtime reported: ThrottlingException: slow down'))).toEqual({ errorName: 'ThrottlingException', atInit: false });
    expect(failureNamedIn('moved by SQS after 3 receives')).toBeUndefined();
  });
});
