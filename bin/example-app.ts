#!/usr/bin/env node
import { App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks, ServerlessChecks } from 'cdk-nag';
import { OrdersExampleStack } from '../example/orders-example-stack';

/**
 * The example app: `npx cdk synth` synthesizes it with no AWS credentials. cdk-nag's AwsSolutions and Serverless
 * packs run as validation plugins, so synth fails on any finding that is neither fixed nor acknowledged with a reason.
 */
const app = new App();
new OrdersExampleStack(app, 'IdempotentEventFlowExample', {
  description:
    'idempotent-event-flow example: orders (outbox) -> billing (transactional, emits OrderBilled), invoicing (multi-step), ' +
    'notifications (lease), shipping (transactional, filtered); OrderBilled -> customer stats (aggregate); ' +
      'fulfilment steps (ordered outbox, FIFO per order) -> order tracking (ordered)',
});
Validations.of(app).addPlugins(new AwsSolutionsChecks(app), new ServerlessChecks(app));
app.synth();
