/**
 * IAM on the ordered path (test/simulator/fixtures/ordered, its template with a grant taken away: missing-grants.ts): the pipe's sqs:SendMessage to the FIFO
 * relay queue and the fan-out function's sns:Publish to the FIFO topic (with the topic key's use through SNS) are
 * evaluated like every other request of a run. A stack without one of those grants fails the run with the denial named;
 * the fixture's own stack (ordered-path.int.test.ts) passes with them.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { EXIT_CODE } from '../../../simulator/cli/main';
import { MISSING_GRANTS, removeGrant, type MissingGrant } from '../fixtures/ordered/missing-grants';
import { simulateOrdered, synthesizeOrdered, type OrderedAssemblies } from './ordered-fixture';

let synthesized: OrderedAssemblies | undefined;
const assemblies = new Map<MissingGrant, string>();

beforeAll(async () => {
  // synthesized once; each variant is the template with one grant taken away
  synthesized = await synthesizeOrdered([{}]);
  for (const missing of MISSING_GRANTS) assemblies.set(missing, synthesized.edited(synthesized.assemblies[0]!, (template) => removeGrant(template, missing)));
});

afterAll(() => synthesized?.remove());

function simulate(missingGrant: MissingGrant): Promise<{ code: number; stdout: string }> {
  return simulateOrdered(assemblies.get(missingGrant)!, '--count', '3', '--seed', 'ordered-iam', '--no-faults');
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
