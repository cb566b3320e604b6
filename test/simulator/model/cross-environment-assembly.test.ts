/**
 * Issue 41, step 4: the simulator runs one account and Region. An app whose stacks are in different accounts or
 * Regions (a subscriber in a second account, docs/CROSS-ACCOUNT.md) is refused when its assembly is read, naming each
 * stack's environment and what to do, instead of running it as if it were one account (which would evaluate none of
 * the cross-account policies).
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

it('refuses stacks of two accounts, naming each stack with its environment and the way out', () => {
  const root = twoStacks('aws://111111111111/eu-west-1', 'aws://222222222222/eu-west-1');
  expect(() => readAssembly(root)).toThrow(StackSelectionError);
  expect(() => readAssembly(root)).toThrow(
    'the simulator runs one account and Region, but the stacks are in 2 environments: Payments (aws://111111111111/eu-west-1), ' +
      'Ledger (aws://222222222222/eu-west-1). ',
  );
});

it('says truthfully what can be simulated of it: not the cross-account part, and names the real flag (--stack, not --stacks)', () => {
  const root = twoStacks('aws://111111111111/eu-west-1', 'aws://222222222222/eu-west-1');
  let message = '';
  try {
    readAssembly(root);
  } catch (error) {
    message = (error as Error).message;
  }
  expect(message).not.toContain('--stacks');
  expect(message).toContain('The part of the flow that crosses accounts or Regions cannot be simulated');
  // one environment's stacks alone: a topic with no subscription, or subscriptions with no topic
  expect(message).toContain('--stack selects stacks of one environment, which simulates only a flow that is whole in it');
  expect(message).toContain('synthesize a variant of the app with every stack in one environment');
});

it('refuses stacks of two Regions of one account', () => {
  expect(() => readAssembly(twoStacks('aws://111111111111/eu-west-1', 'aws://111111111111/eu-central-1'))).toThrow(/in 2 environments: .*Ledger \(aws:\/\/111111111111\/eu-central-1\)/);
});

it('reads stacks of one environment, and environment-agnostic stacks beside them, as before', () => {
  expect(readAssembly(twoStacks('aws://111111111111/eu-west-1', 'aws://111111111111/eu-west-1')).stackNames).toEqual(['Payments', 'Ledger']);
  expect(readAssembly(twoStacks('aws://111111111111/eu-west-1', 'aws://unknown-account/unknown-region')).stackNames).toEqual(['Payments', 'Ledger']);
});

it('reads the stacks of one environment when the selection leaves the other out', () => {
  expect(readAssembly(twoStacks('aws://111111111111/eu-west-1', 'aws://222222222222/eu-west-1'), { stacks: ['Payments'] }).stackNames).toEqual(['Payments']);
});
