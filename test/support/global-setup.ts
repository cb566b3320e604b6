import type { TestProject } from 'vitest/node';
import { startDynamoDbLocal } from './dynamodb-local';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Endpoint of the DynamoDB Local server shared by the whole test run. */
    dynamoDbEndpoint: string;
  }
}

/** Starts one real DynamoDB Local for the whole run; each test file creates its own uniquely named tables. */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const server = await startDynamoDbLocal();
  project.provide('dynamoDbEndpoint', server.endpoint);
  return () => server.stop();
}
