import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
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
  // no class-data archive for the run's one server: its start is paid once, and recording one on a machine that has
  // none (every CI run) would add about 2.5 s to the run (the jars, the dump at its stop) to save 0.6 s elsewhere
  const server = await startDynamoDbLocal({ classDataSharing: false });
  const runDirectory = mkdtempSync(path.join(tmpdir(), 'ief-test-run-'));
  // Everything the tests put in the system's temporary directory (CDK's cdk.out* of every App synthesized without an
  // outdir, the simulator's work directories, ...) goes under the run's directory instead, which is removed at the end:
  // test processes are started after this and inherit TMPDIR.
  const temporary = path.join(runDirectory, 'tmp');
  mkdirSync(temporary);
  const previousTemporary = process.env.TMPDIR;
  process.env.TMPDIR = temporary;
  project.provide('dynamoDbEndpoint', server.endpoint);
  project.provide('testRunDirectory', runDirectory);
  return async () => {
    await server.stop();
    if (previousTemporary === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = previousTemporary;
    rmSync(runDirectory, { recursive: true, force: true });
  };
}
