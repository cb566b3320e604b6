#!/usr/bin/env node
import { App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks, ServerlessChecks } from 'cdk-nag';
import { addExampleStacks } from '../example/example-app';

/**
 * The example app: `npx cdk synth` synthesizes it with no AWS credentials. Two stacks in two test accounts
 * (example/example-app.ts): the orders flow, and the loyalty team's subscriber of it in a second account. cdk-nag's
 * AwsSolutions and Serverless packs run as validation plugins, so synth fails on any finding that is neither fixed nor
 * acknowledged with a reason.
 */
const app = new App();
addExampleStacks(app);
Validations.of(app).addPlugins(new AwsSolutionsChecks(app), new ServerlessChecks(app));
app.synth();
