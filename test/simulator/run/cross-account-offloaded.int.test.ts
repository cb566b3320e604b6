/**
 * Issue 42 across accounts (issue 41): the flow offloads every event's data to its payload bucket (the cross-account
 * fixture with `offload=true`), and Ledger, in another account, reads it through the bucket policy's statement for its
 * consumer's role and the flow key's statement for it (docs/LARGE-EVENTS.md, "Subscribers in other accounts and
 * Regions"). IAM is evaluated across accounts: the bucket policy AND the role's identity policy must allow
 * `s3:GetObject`, the key policy AND the identity policy `kms:Decrypt`. With either of the flow's statements removed
 * from the template, the run fails naming the refused request and the policy that lacks the statement.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, inject, test } from 'vitest';
import { EXIT_CODE, main } from '../../../simulator/cli/main';
import { synthesize } from '../../../simulator/model/synthesize';
import { remoteReaderSids } from '../../../lib/private/remote-payload-readers';
import { assemblyVariant, type AssemblyVariant, type StatementJson, type TemplateJson } from '../../support/assembly-variant';

const PROJECT = path.resolve(__dirname, '../../..');
const FIXTURE = 'test/simulator/fixtures/cross-account';
const SIDS = remoteReaderSids('Ledger', '222222222222');

let directory: string;
let assembly: string;
let events: string;
const variants: AssemblyVariant[] = [];

beforeAll(async () => {
  directory = mkdtempSync(path.join(tmpdir(), 'ief-cross-account-offloaded-'));
  assembly = await synthesize({ cwd: PROJECT, app: `npx tsx ${FIXTURE}/app.ts`, outputDirectory: path.join(directory, 'cdk.out'), context: { offload: 'true' } });
  events = path.join(directory, 'events.json');
  writeFileSync(events, JSON.stringify(Array.from({ length: 3 }, (_, index) => ({ type: 'com.example.Paid', subject: `p${index}`, data: { index, memo: 'x'.repeat(64) } }))));
});

afterEach(() => {
  for (const variant of variants.splice(0)) variant.remove();
});

afterAll(() => rmSync(directory, { recursive: true, force: true }));

async function simulate(from: string): Promise<{ code: number; stdout: string }> {
  let stdout = '';
  const code = await main(
    ['simulate', '--assembly', from, '--scenario', `${FIXTURE}/scenario.ts`, '--events', events, '--no-faults', '--quiet', '--seed', 'cross-account-offloaded', '--endpoint', inject('dynamoDbEndpoint')],
    { stdout: (text) => void (stdout += text), stderr: (text) => void (stdout += text), cwd: PROJECT },
  );
  return { code, stdout };
}

/** A copy of the assembly with the statement `sid` removed from the Payments policy of `type` (`PolicyDocument`, or `KeyPolicy`). */
function without(type: 'AWS::S3::BucketPolicy' | 'AWS::KMS::Key', sid: string): string {
  const made = assemblyVariant(assembly, 'Payments', (template: TemplateJson) => {
    const holders = Object.values(template.Resources).filter((resource) => resource.Type === type && JSON.stringify(resource.Properties ?? {}).includes(`"Sid":"${sid}"`));
    if (holders.length !== 1) throw new Error(`expected one ${type} with the statement ${sid}, found ${holders.length}`);
    const properties = holders[0]!.Properties!;
    const document = (properties.PolicyDocument ?? properties.KeyPolicy) as { Statement: StatementJson[] };
    document.Statement = document.Statement.filter((statement) => statement.Sid !== sid);
  });
  variants.push(made);
  return made.directory;
}

describe('simulate: a subscriber of another account reading offloaded events from the flow’s payload bucket', () => {
  test('with the flow’s grants, Ledger applies every offloaded event once: OK', async () => {
    const { code, stdout } = await simulate(assembly);
    expect(stdout).toMatch(/^Ledger\s+transactional\s+3\s/m);
    expect(stdout).toMatch(/^Reports\s+transactional\s+3\s/m);
    expect(stdout).toContain('(3 of them offloaded');
    expect(stdout).toMatch(/IAM: \d+ requests evaluated, \d+ authorized, 0 denied/);
    expect(code, stdout).toBe(EXIT_CODE.OK);
  });

  test('without the bucket policy’s s3:GetObject statement for Ledger’s account, the read is denied and the run fails naming it', async () => {
    const { code, stdout } = await simulate(without('AWS::S3::BucketPolicy', SIDS.get));
    expect(code, stdout).toBe(EXIT_CODE.FAILURE);
    expect(stdout).toMatch(/\[access-denied\] [^\n]*Ledger\/Ledger\/[^\n]* may not s3:GetObject on [^\n]*PayloadBucket[^\n]*: the (bucket|resource) policy of Payments\/Payments\/PayloadBucket[^\n]*/);
  });

  test('without the flow key’s kms:Decrypt statement for Ledger’s account, the read is denied and the run fails naming it', async () => {
    const { code, stdout } = await simulate(without('AWS::KMS::Key', SIDS.decrypt));
    expect(code, stdout).toBe(EXIT_CODE.FAILURE);
    expect(stdout).toMatch(/\[access-denied\] [^\n]*Ledger\/Ledger\/[^\n]* may not kms:Decrypt on [^\n]*: the key policy of Payments\/[^\n]*/);
  });
});
