/**
 * The deploy-time rule and the synth's warnings, from a real CDK synthesis: a function timeout raised by an Aspect above
 * its queue's visibility timeout (the SQS event source checked the timeout it had when it was bound) is refused, and
 * the app's warnings are read from the assembly's manifest.
 */
import { Annotations, App, Aspects, Duration, Stack, type IAspect } from 'aws-cdk-lib';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import type { IConstruct } from 'constructs';
import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { checkDeployRules } from '../../../simulator/check/deploy-rules';
import { readAssembly } from '../../../simulator/model/read-assembly';
import { readSynthAnnotations } from '../../../simulator/model/synth-annotations';

const directory = mkdtempSync(path.join(tmpdir(), 'ief-deploy-rules-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

/** Raises every function's timeout to 300 s, after the event sources were bound. */
class LongTimeouts implements IAspect {
  public visit(node: IConstruct): void {
    if (node instanceof lambda.CfnFunction) node.timeout = 300;
  }
}

describe('deploy-refused, from a synthesized app', () => {
  test('a timeout an Aspect raised above the queue visibility timeout is refused; the warnings of the synth are listed', () => {
    // GIVEN an app whose function timeout an Aspect raises to 300 s, on a queue with a visibility timeout of 60 s
    const code = path.join(directory, 'code');
    mkdirSync(code);
    writeFileSync(path.join(code, 'index.js'), 'exports.handler = async () => ({ batchItemFailures: [] });');
    const outdir = path.join(directory, 'cdk.out');
    // as the CDK CLI synthesizes: each resource's construct path in its metadata
    const app = new App({ outdir, context: { 'aws:cdk:enable-path-metadata': true } });
    const stack = new Stack(app, 'Seats');
    const queue = new sqs.Queue(stack, 'Queue', { visibilityTimeout: Duration.seconds(60) });
    const fn = new lambda.Function(stack, 'Consumer', { code: lambda.Code.fromAsset(code), handler: 'index.handler', runtime: lambda.Runtime.NODEJS_22_X, timeout: Duration.seconds(10) });
    fn.addEventSource(new SqsEventSource(queue));
    Aspects.of(stack).add(new LongTimeouts());
    Annotations.of(fn).addWarningV2('test:seats', 'the seats consumer is slow');

    // WHEN it is synthesized and read
    app.synth();
    const model = readAssembly(outdir);

    // THEN the mapping is refused with both values, and the app's warning is listed with its construct path
    expect(checkDeployRules(model)).toEqual([
      { kind: 'deploy-refused', detail: expect.stringMatching(/the timeout of function Seats\/Consumer\/Resource \(300 s\) is above the visibility timeout of its queue Seats\/Queue\/Resource \(60 s\)/) },
    ]);
    expect(readSynthAnnotations(outdir, model.stackNames)).toContainEqual({ level: 'warning', path: '/Seats/Consumer', message: expect.stringContaining('the seats consumer is slow') });
  });
});
