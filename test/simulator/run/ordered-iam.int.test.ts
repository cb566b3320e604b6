/**
 * IAM on the ordered path (test/simulator/fixtures/ordered, `missingGrant`): the pipe's sqs:SendMessage to the FIFO
 * relay queue and the fan-out function's sns:Publish to the FIFO topic (with the topic key's use through SNS) are
 * evaluated like every other request of a run. A stack without one of those grants fails the run with the denial named;
 * the fixture's own stack (ordered-path.int.test.ts) passes with them.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, test } from 'vitest';
import { EXIT_CODE, main } from '../../../simulator/cli/main';
import { synthesize } from '../../../simulator/model/synthesize';
import type { MissingGrant } from '../fixtures/ordered/missing-grants';

const PROJECT = path.resolve(__dirname, '../../..');
const FIXTURE = 'test/simulator/fixtures/ordered';
const VARIANTS: readonly MissingGrant[] = ['pipe-send', 'fan-out-publish', 'fan-out-key'];

let directory: string;
const assemblies = new Map<MissingGrant, string>();

beforeAll(async () => {
  directory = mkdtempSync(path.join(tmpdir(), 'ief-ordered-iam-'));
  const synthesized = await Promise.all(
    VARIANTS.map((missingGrant) => synthesize({ app: `npx tsx ${FIXTURE}/app.ts`, cwd: PROJECT, outputDirectory: path.join(directory, `${missingGrant}.out`), context: { missingGrant } })),
  );
  VARIANTS.forEach((variant, index) => assemblies.set(variant, synthesized[index]!));
});

afterAll(() => {
  if (directory !== undefined) rmSync(directory, { recursive: true, force: true });
});

async function simulate(missingGrant: MissingGrant): Promise<{ code: number; stdout: string }> {
  let stdout = '';
  const argv = ['simulate', '--count', '3', '--seed', 'ordered-iam', '--no-faults', '--assembly', assemblies.get(missingGrant)!, '--scenario', `${FIXTURE}/scenario.ts`, '--quiet', '--endpoint', inject('dynamoDbEndpoint')];
  const code = await main(argv, { stdout: (text) => void (stdout += text), stderr: (text) => void (stdout += text), cwd: PROJECT });
  return { code, stdout };
}

describe('IAM on the ordered path', () => {
  test('a pipe role without sqs:SendMessage on the FIFO relay queue: access denied, named, and nothing reaches the subscriber', async () => {
    const { code, stdout } = await simulate('pipe-send');
    expect(stdout).toMatch(/\[access-denied\] [^\n]*Ordered\/OrderedRelay\/PipeRole[^\n]* may not sqs:SendMessage on Ordered\/OrderedRelay\/RelayQueue/);
    expect(code).toBe(EXIT_CODE.FAILURE);
  });

  test('a fan-out role without sns:Publish on the FIFO topic: access denied, named', async () => {
    const { code, stdout } = await simulate('fan-out-publish');
    expect(stdout).toMatch(/\[access-denied\] [^\n]*FanOut[^\n]* may not sns:Publish on Ordered\/OrderedRelay\/Topic/);
    expect(code).toBe(EXIT_CODE.FAILURE);
  });

  test("a fan-out role without the topic key's use through SNS: access denied on kms:GenerateDataKey, named", async () => {
    const { code, stdout } = await simulate('fan-out-key');
    expect(stdout).toMatch(/\[access-denied\] [^\n]*FanOut[^\n]* may not kms:GenerateDataKey on Ordered\/OrderedRelay\/[^\n]*Key/);
    expect(code).toBe(EXIT_CODE.FAILURE);
  });
});
