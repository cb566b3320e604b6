import { describe, expect, test } from 'vitest';
import { lambdaEnvironmentVariables, type EnvironmentVariablesInput } from '../../../simulator/lambda/environment-variables';

const input: EnvironmentVariablesInput = {
  functionVariables: { TABLE: 'orders', AWS_ENDPOINT_URL_SNS: 'http://elsewhere' },
  functionName: 'Shop-Consumer',
  region: 'eu-west-1',
  memorySizeMb: 256,
  taskRoot: '/asset',
  handler: 'index.handler',
  runtime: 'nodejs24.x',
  logStreamName: 'stream',
  dynamoDbEndpoint: 'http://127.0.0.1:1',
  sqsEndpoint: 'http://127.0.0.1:2',
  blockedEndpoint: 'http://127.0.0.1:3',
};

describe('lambdaEnvironmentVariables', () => {
  test("passes the function's application log level as AWS_LAMBDA_LOG_LEVEL, as Lambda does", () => {
    expect(lambdaEnvironmentVariables({ ...input, applicationLogLevel: 'DEBUG' }).AWS_LAMBDA_LOG_LEVEL).toBe('DEBUG');
  });

  test('sets no AWS_LAMBDA_LOG_LEVEL when the function has no application log level', () => {
    expect('AWS_LAMBDA_LOG_LEVEL' in lambdaEnvironmentVariables(input)).toBe(false);
  });

  test("keeps the function's own variables and drops those that would redirect a call", () => {
    const variables = lambdaEnvironmentVariables(input);
    expect(variables.TABLE).toBe('orders');
    expect('AWS_ENDPOINT_URL_SNS' in variables).toBe(false);
  });
});
