/**
 * Issue 41: an app whose stacks are in different accounts or Regions (a subscriber in a second account, docs/CROSS-ACCOUNT.md)
 * is read with each stack's environment, so that each resource is simulated in its own account and Region; a stack of no
 * known environment beside them is refused, naming it. (Once refused as a whole: the simulator ran one account.)
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { readAssembly, StackSelectionError } from '../../../simulator/model/read-assembly';
import { writeAssembly } from './assembly-fixture';

const created: string[] = [];
afterEach(() => {
  for (const directory of created.splice(0)) fs.rmSync(directory, { recursive: true, force: true });
});

/** Two empty stacks, Payments and Ledger, in these environments. */
function twoStacks(payments: string, ledger: string): string {
  const root = writeAssembly({ Payments: { template: { Resources: {} } }, Ledger: { template: { Resources: {} } } });
  created.push(root);
  const file = path.join(root, 'manifest.json');
  const manifest = JSON.parse(fs.readFileSync(file, 'utf8')) as { artifacts: Record<string, Record<string, unknown>> };
  manifest.artifacts.Payments.environment = payments;
  manifest.artifacts.Ledger.environment = ledger;
  fs.writeFileSync(file, JSON.stringify(manifest));
  return root;
}

it('reads stacks of two accounts, each with its environment', () => {
  const model = readAssembly(twoStacks('aws://111111111111/eu-west-1', 'aws://222222222222/eu-west-1'));
  expect(model.stackNames).toEqual(['Payments', 'Ledger']);
  expect(model.environments).toEqual(new Map([['Payments', { account: '111111111111', region: 'eu-west-1' }], ['Ledger', { account: '222222222222', region: 'eu-west-1' }]]));
});

it('reads stacks of two Regions of one account, each with its environment', () => {
  expect(readAssembly(twoStacks('aws://111111111111/eu-west-1', 'aws://111111111111/eu-central-1')).environments?.get('Ledger')).toEqual({ account: '111111111111', region: 'eu-central-1' });
});

it('refuses an environment-agnostic stack beside stacks of several environments, naming it and the way out', () => {
  const root = writeAssembly({ Payments: { template: { Resources: {} } }, Ledger: { template: { Resources: {} } }, Reports: { template: { Resources: {} } } });
  created.push(root);
  const file = path.join(root, 'manifest.json');
  const manifest = JSON.parse(fs.readFileSync(file, 'utf8')) as { artifacts: Record<string, Record<string, unknown>> };
  manifest.artifacts.Payments.environment = 'aws://111111111111/eu-west-1';
  manifest.artifacts.Ledger.environment = 'aws://222222222222/eu-west-1';
  manifest.artifacts.Reports.environment = 'aws://unknown-account/unknown-region';
  fs.writeFileSync(file, JSON.stringify(manifest));
  expect(() => readAssembly(root)).toThrow(StackSelectionError);
  expect(() => readAssembly(root)).toThrow(
    'the stacks are in 2 accounts and 1 Regions, but Reports (aws://unknown-account/unknown-region) names no account or Region: set env: { account, region } on every stack',
  );
});

// nu7 finding 1: stacks of ONE explicit environment were read with no environments, so their resources got the local
// account and the run's Region while their templates carry the real ones (IAM then denied the library's own grants)
it('reads stacks of one explicit environment in that environment', () => {
  const model = readAssembly(twoStacks('aws://111111111111/eu-west-1', 'aws://111111111111/eu-west-1'));
  expect(model.stackNames).toEqual(['Payments', 'Ledger']);
  expect(model.environments).toEqual(new Map([['Payments', { account: '111111111111', region: 'eu-west-1' }], ['Ledger', { account: '111111111111', region: 'eu-west-1' }]]));
});

it('places an environment-agnostic stack beside stacks of one explicit environment in that environment', () => {
  const model = readAssembly(twoStacks('aws://111111111111/eu-west-1', 'aws://unknown-account/unknown-region'));
  expect(model.stackNames).toEqual(['Payments', 'Ledger']);
  expect(model.environments?.get('Ledger')).toEqual({ account: '111111111111', region: 'eu-west-1' });
});

it('fills the part a stack of one environment leaves unknown: the local account, or the run\'s Region', () => {
  expect(readAssembly(twoStacks('aws://111111111111/unknown-region', 'aws://111111111111/unknown-region'), { region: 'eu-north-1' }).environments?.get('Ledger')).toEqual({ account: '111111111111', region: 'eu-north-1' });
  expect(readAssembly(twoStacks('aws://unknown-account/eu-west-1', 'aws://unknown-account/unknown-region')).environments?.get('Ledger')).toEqual({ account: '000000000000', region: 'eu-west-1' });
});

it('reads environment-agnostic stacks as before: no environments (the local account and the run\'s Region)', () => {
  expect(readAssembly(twoStacks('aws://unknown-account/unknown-region', 'aws://unknown-account/unknown-region')).environments).toBeUndefined();
});

it('reads the stacks of one environment when the selection leaves the other out, in that environment', () => {
  const model = readAssembly(twoStacks('aws://111111111111/eu-west-1', 'aws://222222222222/eu-west-1'), { stacks: ['Payments'] });
  expect(model.stackNames).toEqual(['Payments']);
  expect(model.environments).toEqual(new Map([['Payments', { account: '111111111111', region: 'eu-west-1' }]]));
});
