/**
 * The served run's one AWS endpoint (simulator/aws/aws-gateway.ts), reached by the real SDK clients configured only by
 * the SDK's global endpoint setting, AWS_ENDPOINT_URL: CloudFormation's stack reads (Query protocol), Lambda's
 * Invoke, GetFunctionConfiguration and ListEventSourceMappings (REST-JSON), and DynamoDB forwarded to DynamoDB Local.
 */
import { CloudFormationClient, DescribeStackResourcesCommand, DescribeStacksCommand, ListStackResourcesCommand } from '@aws-sdk/client-cloudformation';
import { ListTablesCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { GetFunctionConfigurationCommand, InvokeCommand, LambdaClient, ListEventSourceMappingsCommand } from '@aws-sdk/client-lambda';
import { afterAll, beforeAll, describe, expect, inject, test } from 'vitest';
import { signedService, startAwsGateway } from '../../../simulator/aws/aws-gateway';
import { cloudFormationHandler, type ServedStack } from '../../../simulator/aws/cloudformation-endpoint';
import { lambdaHandler, type InvokableFunction } from '../../../simulator/aws/lambda-endpoint';
import type { LoopbackServer } from '../../../simulator/aws/loopback-server';
import { createTable, localClient, uniqueTableName } from '../../support/dynamodb-client';

const STACK: ServedStack = {
  stackName: 'App',
  stackId: 'arn:aws:cloudformation:us-east-1:000000000000:stack/App/00000000-0000-4000-8000-000000000001',
  createdAt: '2026-01-01T00:00:00.000Z',
  outputs: [{ key: 'OrdersShippingOperatorA1B2C3D4', value: '{"format":1,"subscriberName":"Shipping"}', description: 'What operators of subscriber Shipping need' }],
  resources: [
    { logicalId: 'OrdersPlaceOrder12345678', type: 'AWS::Lambda::Function', physicalId: 'App-OrdersPlaceOrder12345678' },
    { logicalId: 'ShipmentsTable0A1B2C3D', type: 'AWS::DynamoDB::Table', physicalId: 'App-Shipments <&>' },
  ],
};
const QUEUE_ARN = 'arn:aws:sqs:us-east-1:000000000000:App-ShippingQueue';

let gateway: LoopbackServer;
const environment = { ...process.env };
const config = { region: 'us-east-1', credentials: { accessKeyId: 'simulator', secretAccessKey: 'simulator' } };

beforeAll(async () => {
  gateway = await startAwsGateway({
    forward: { dynamodb: inject('dynamoDbEndpoint') },
    handle: {
      cloudformation: cloudFormationHandler([STACK]),
      lambda: lambdaHandler(
        new Map<string, InvokableFunction>([
          ['App-OrdersPlaceOrder12345678', { arn: 'arn:aws:lambda:us-east-1:000000000000:function:App-OrdersPlaceOrder12345678', environment: { ORDERS_TABLE_NAME: 'App-Orders' }, invoke: async (event: unknown) => ({ kind: 'returned' as const, response: { statusCode: 201, echo: event } }) }],
          ['App-Shipping', { arn: 'arn:aws:lambda:us-east-1:000000000000:function:App-Shipping', environment: {}, invoke: async () => ({ kind: 'threw' as const, errorName: 'Error', errorMessage: 'shipping is down' }) }],
        ]),
        [{ uuid: 'App/ShippingMapping', eventSourceArn: QUEUE_ARN, functionName: 'App-Shipping', batchSize: 10 }],
        () => 'the test run',
      ),
    },
  });
  // the SDK's global endpoint setting: the clients below are given no endpoint
  process.env.AWS_ENDPOINT_URL = gateway.endpoint;
});

afterAll(async () => {
  process.env = environment;
  await gateway.stop();
});

describe('the served AWS endpoint', () => {
  test('routes by the service the SigV4 signature names', () => {
    expect(signedService('AWS4-HMAC-SHA256 Credential=AKID/20260101/us-east-1/cloudformation/aws4_request, SignedHeaders=host, Signature=00')).toBe('cloudformation');
    expect(signedService(undefined)).toBeUndefined();
  });

  test("answers CloudFormation's stack reads of the served stacks, and a stack it does not serve as CloudFormation does", async () => {
    const client = new CloudFormationClient(config);
    const described = await client.send(new DescribeStacksCommand({ StackName: 'App' }));
    expect(described.Stacks?.[0]).toMatchObject({ StackName: 'App', StackStatus: 'CREATE_COMPLETE', Outputs: [{ OutputKey: 'OrdersShippingOperatorA1B2C3D4', OutputValue: '{"format":1,"subscriberName":"Shipping"}' }] });
    const listed = await client.send(new ListStackResourcesCommand({ StackName: 'App' }));
    expect(listed.StackResourceSummaries?.map((resource) => [resource.LogicalResourceId, resource.ResourceType, resource.PhysicalResourceId])).toEqual([
      ['OrdersPlaceOrder12345678', 'AWS::Lambda::Function', 'App-OrdersPlaceOrder12345678'],
      ['ShipmentsTable0A1B2C3D', 'AWS::DynamoDB::Table', 'App-Shipments <&>'],
    ]);
    const one = await client.send(new DescribeStackResourcesCommand({ StackName: 'App', LogicalResourceId: 'ShipmentsTable0A1B2C3D' }));
    expect(one.StackResources?.map((resource) => resource.PhysicalResourceId)).toEqual(['App-Shipments <&>']);
    await expect(client.send(new DescribeStacksCommand({ StackName: 'Other' }))).rejects.toMatchObject({ name: 'ValidationError', message: 'Stack with id Other does not exist' });
  });

  test("answers Lambda's Invoke (a handler's throw as a function error), GetFunctionConfiguration and ListEventSourceMappings", async () => {
    const client = new LambdaClient(config);
    const returned = await client.send(new InvokeCommand({ FunctionName: 'App-OrdersPlaceOrder12345678', Payload: JSON.stringify({ orderId: 'o-1' }) }));
    expect(returned.FunctionError).toBeUndefined();
    expect(JSON.parse(Buffer.from(returned.Payload!).toString('utf8'))).toEqual({ statusCode: 201, echo: { orderId: 'o-1' } });
    const threw = await client.send(new InvokeCommand({ FunctionName: 'arn:aws:lambda:us-east-1:000000000000:function:App-Shipping', Payload: '{}' }));
    expect(threw.FunctionError).toBe('Unhandled');
    expect(JSON.parse(Buffer.from(threw.Payload!).toString('utf8'))).toEqual({ errorType: 'Error', errorMessage: 'shipping is down' });
    await expect(client.send(new InvokeCommand({ FunctionName: 'App-Nothing' }))).rejects.toMatchObject({ name: 'ResourceNotFoundException' });
    const configuration = await client.send(new GetFunctionConfigurationCommand({ FunctionName: 'App-OrdersPlaceOrder12345678' }));
    expect(configuration.Environment?.Variables).toEqual({ ORDERS_TABLE_NAME: 'App-Orders' });
    const mappings = await client.send(new ListEventSourceMappingsCommand({ EventSourceArn: QUEUE_ARN }));
    expect(mappings.EventSourceMappings?.map((mapping) => mapping.FunctionArn)).toEqual(['arn:aws:lambda:us-east-1:000000000000:function:App-Shipping']);
  });

  test('forwards DynamoDB to the run\'s DynamoDB Local', async () => {
    const tableName = uniqueTableName('gateway');
    await createTable(localClient(), tableName, { partitionKey: 'pk' });
    const client = new DynamoDBClient(config);
    const tables = await client.send(new ListTablesCommand({ ExclusiveStartTableName: tableName.slice(0, -1) }));
    expect(tables.TableNames).toContain(tableName);
  });

  test("forwards DynamoDB signed with the served run's `<account>.<role>` access key, which DynamoDB Local itself rejects (NUX15-1)", async () => {
    const tableName = uniqueTableName('gateway-dotted');
    await createTable(localClient(), tableName, { partitionKey: 'pk' });
    const client = new DynamoDBClient({ ...config, credentials: { accessKeyId: '222222222222.payments-oncall', secretAccessKey: 'simulator' } });
    const tables = await client.send(new ListTablesCommand({ ExclusiveStartTableName: tableName.slice(0, -1) }));
    expect(tables.TableNames).toContain(tableName);
  });
});
