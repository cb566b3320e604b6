/**
 * How long synthesizing the split-stacks layout takes in a test process (issue 30: the testing guide's advice on
 * vitest's 10-second hook timeout): a flow's stack with a producer, a subscriber and the dashboard, and two subscriber
 * stacks created from the flow, bundling skipped. Two rounds in one process, first cold (aws-cdk-lib's modules and the
 * CloudFormation validator's WebAssembly module loaded on first use) then warm; each synthesizes the layout without the
 * built-in CloudFormation validation, with it (aws-cdk-lib's default), and with cdk-nag and the strict validation the
 * compliance tests use, in that order (so each later one finds what the earlier ones loaded). Run it several times: the cold figure
 * is what a test file's first `beforeAll` pays.
 *
 *   npx tsx bench/split-stacks-synth.ts
 */
import { App, Stack } from 'aws-cdk-lib';
import * as path from 'node:path';
import { IdempotentEventFlow, ProcessingMode, Subscriber } from '../lib';
import { checkCompliance, complianceApp } from '../test/support/compliance';

const entry = path.join(__dirname, '..', 'test', 'fixtures', 'consumer-handler.ts');

function layout(app: App): void {
  const payments = new Stack(app, 'Payments');
  const flow = new IdempotentEventFlow(payments, 'Payments', { dashboard: true });
  flow.addProducer('TakePayment', { entry });
  flow.addSubscriber('Audit', { entry });
  new Subscriber(new Stack(app, 'Ledger'), 'Ledger', { flow, entry, publishesEvents: true });
  new Subscriber(new Stack(app, 'Notifications'), 'Notifications', { flow, entry, processingMode: ProcessingMode.LEASE });
}

function timed(run: () => void): number {
  const start = process.hrtime.bigint();
  run();
  return Number(process.hrtime.bigint() - start) / 1e6;
}

for (const round of ['cold', 'warm']) {
  const unvalidated = timed(() => {
    const app = new App({ builtinCloudFormationValidation: false, context: { 'aws:cdk:bundling-stacks': [] } });
    layout(app);
    app.synth();
  });
  const plain = timed(() => {
    const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
    layout(app);
    app.synth();
  });
  const compliance = timed(() => {
    const app = complianceApp();
    layout(app);
    checkCompliance(app);
  });
  console.log(
    `${round}: without CloudFormation validation ${unvalidated.toFixed(0)} ms; with it (the default) ${plain.toFixed(0)} ms; ` +
      `complianceApp() with cdk-nag and strict validation ${compliance.toFixed(0)} ms`,
  );
}
