import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import type { TestProject } from 'vitest/node';
import { startDynamoDbLocal } from './dynamodb-local';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Endpoint of the DynamoDB Local server shared by the whole test run. */
    dynamoDbEndpoint: string;
    /** A directory that lives as long as the test run, for what test files share (see example-assembly.ts). */
    testRunDirectory: string;
  }
}

/** Starts one real DynamoDB Local for the whole run; each test file creates its own uniquely named tables. */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const server = await startDynamoDbLocal();
  const runDirectory = mkdtempSync(path.join(tmpdir(), 'ief-test-run-'));
  project.provide('dynamoDbEndpoint', server.endpoint);
  project.provide('testRunDirectory', runDirectory);
  return async () => {
    await server.stop();
    rmSync(runDirectory, { recursive: true, force: true });
  };
}
