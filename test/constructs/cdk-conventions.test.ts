/**
 * The aws-cdk-lib conventions a newcomer expects (issue 22, items 7, 8 and 10). Part of this file is checked by the
 * compiler: `tsc -p tsconfig.json --noEmit` fails when a subscriber is not an `IGrantable` or a producer's
 * `lambdaFunction` is not a `lambda.Function` (the lines marked "compiles only if").
 */
import { App, Errors, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as apigateway from 'aws-cdk-lib/aws-apigateway';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as path from 'node:path';
import { describe, expect, test } from 'vitest';
import { IdempotentEventFlow, ProcessingMode } from '../../lib';
import { HANDLER_ENTRY, newStack } from '../fixtures/construct-test-kit';

const LEASE_HANDLER_ENTRY = path.join(__dirname, '..', 'fixtures', 'lease-consumer-handler.ts');

/** The statements of the IAM policies attached to `role`. */
function statementsOf(stack: Stack, role: iam.IRole): unknown[] {
  const policies = Template.fromStack(stack).findResources('AWS::IAM::Policy', { Properties: { Roles: [stack.resolve(role.roleName)] } });
  return Object.values(policies).flatMap((policy) => policy.Properties.PolicyDocument.Statement as unknown[]);
}

describe('Subscriber is an iam.IGrantable', () => {
  test("table.grantWriteData(subscriber) grants the consumer function's role", () => {
    const stack = newStack();
    const flow = new IdempotentEventFlow(stack, 'Orders');
    const subscriber = flow.addSubscriber('Billing', { entry: HANDLER_ENTRY });
    const invoices = new dynamodb.Table(stack, 'Invoices', { partitionKey: { name: 'PK', type: dynamodb.AttributeType.STRING } });
    // compiles only if Subscriber implements iam.IGrantable
    invoices.grantWriteData(subscriber);
    expect(subscriber.grantPrincipal).toBe(subscriber.consumerFunction.role);
    expect(JSON.stringify(statementsOf(stack, subscriber.consumerFunction.role))).toContain(
      JSON.stringify(stack.resolve(invoices.tableArn)),
    );
  });
});

describe("ProducerFunction's lambdaFunction is a lambda.Function", () => {
  test('takes addEnvironment and serves as an API handler (lambda.IFunction)', () => {
    const stack = newStack();
    const flow = new IdempotentEventFlow(stack, 'Orders');
    const producer = flow.addProducer('PlaceOrder', { entry: HANDLER_ENTRY });
    // compiles only if lambdaFunction is typed lambda.Function
    const fn: lambda.Function = producer.lambdaFunction;
    fn.addEnvironment('ORDERS_TABLE', 'orders');
    new apigateway.LambdaRestApi(stack, 'Api', { handler: producer.lambdaFunction });
    const template = Template.fromStack(stack);
    const functions = template.findResources('AWS::Lambda::Function', { Properties: { Environment: { Variables: { ORDERS_TABLE: 'orders' } } } });
    expect(Object.keys(functions)).toEqual([stack.getLogicalId(fn.node.defaultChild as lambda.CfnFunction)]);
    template.resourceCountIs('AWS::ApiGateway::RestApi', 1);
  });
});

describe('IdempotentEventFlow.grantAppendEvents', () => {
  test('grants exactly dynamodb:PutItem on the outbox, as the deprecated grantPublish still does', () => {
    const stack = newStack();
    const flow = new IdempotentEventFlow(stack, 'Orders');
    const appender = new iam.Role(stack, 'Appender', { assumedBy: new iam.AccountRootPrincipal() });
    const legacy = new iam.Role(stack, 'Legacy', { assumedBy: new iam.AccountRootPrincipal() });
    flow.grantAppendEvents(appender);
    // eslint-disable-next-line @typescript-eslint/no-deprecated -- the old name must keep working
    flow.grantPublish(legacy);
    const expected = [{ Sid: 'IdempotentEventFlowGrantAppendEvents', Action: 'dynamodb:PutItem', Effect: 'Allow', Resource: stack.resolve(flow.outboxTable.table.tableArn), Condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['OUTBOX#*'] } } }];
    expect(statementsOf(stack, appender)).toEqual(expected);
    expect(statementsOf(stack, legacy)).toEqual(expected);
  });
});

describe('validation errors', () => {
  test("are aws-cdk-lib's ValidationError (Errors.isValidationError), naming the prop, the bound and the value", () => {
    const stack = newStack();
    let thrown: unknown;
    try {
      new IdempotentEventFlow(stack, 'Orders', { relayBatchSize: 11 });
    } catch (error) {
      thrown = error;
    }
    expect(Errors.isValidationError(thrown)).toBe(true);
    expect((thrown as Error).message).toBe("IdempotentEventFlow 'Orders': relayBatchSize must be 10 or less, but 11 was provided");
  });

  test('fails if a subscriber id is added twice, saying the id is taken (not suggesting subscriberName)', () => {
    const stack = newStack();
    const flow = new IdempotentEventFlow(stack, 'Orders');
    flow.addSubscriber('Billing', { entry: HANDLER_ENTRY });
    const again = (): unknown => flow.addSubscriber('Billing', { entry: HANDLER_ENTRY, subscriberName: 'Billing2' });
    expect(again).toThrow(
      "IdempotentEventFlow 'Orders': a subscriber with id 'Billing' was already added (TestStack/Orders/Billing); give each addSubscriber call its own id",
    );
  });

  test("fails if handler names the file too ('index.handler'), saying to drop the file part", () => {
    const stack = newStack();
    const flow = new IdempotentEventFlow(stack, 'Orders');
    expect(() => flow.addSubscriber('Billing', { entry: HANDLER_ENTRY, handler: 'index.handler' })).toThrow(
      "Subscriber 'Billing': handler must be the name of the exported function only, but 'index.handler' was provided; " +
        "entry names the file, so drop the file part: handler: 'handler'",
    );
  });

  describe('a handler built with the factory of another processing mode', () => {
    /** A stack that bundles, so the handler's module is read at synth. */
    function bundlingStack(): Stack {
      return new Stack(new App({ builtinCloudFormationValidation: false }), 'TestStack');
    }

    test('fails at synth when the module shows the factory, naming the mode and the factory', () => {
      const flow = new IdempotentEventFlow(bundlingStack(), 'Orders');
      expect(() => flow.addSubscriber('Shipping', { entry: LEASE_HANDLER_ENTRY })).toThrow(
        "TestStack/Orders/Shipping/Function: handler 'handler' of '" +
          LEASE_HANDLER_ENTRY +
          "' is built with createLeaseConsumer (ProcessingMode.LEASE), but the subscriber's processingMode is " +
          'ProcessingMode.TRANSACTIONAL, whose factory is createTransactionalConsumer; every invocation would fail at ' +
          'cold start. Set processingMode: ProcessingMode.LEASE or build the handler with createTransactionalConsumer',
      );
    });

    test('passes when the factory matches the mode', () => {
      const stack = bundlingStack();
      const flow = new IdempotentEventFlow(stack, 'Orders');
      expect(() => flow.addSubscriber('Shipping', { entry: LEASE_HANDLER_ENTRY, processingMode: ProcessingMode.LEASE })).not.toThrow();
    });
  });
});
