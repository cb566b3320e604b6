import { App, Stack } from 'aws-cdk-lib';
import { Construct } from 'constructs';
import { describe, expect, test } from 'vitest';
import { assertLocalEsbuild, detectLocalEsbuild } from '../../lib/private/local-esbuild';

const nothingFound = () => undefined;

describe('the local esbuild (issue 12, item 1: never Docker; issue 32, item 2: installed by the user)', () => {
  test('is found as aws-cdk-lib finds it: esbuild/package.json loadable from aws-cdk-lib', () => {
    expect(detectLocalEsbuild()).toMatch(/^esbuild \d+\.\d+\.\d+ \(node_modules\)$/);
  });

  test('missing where the stack must bundle: synth fails naming the function and what to install, instead of running Docker', () => {
    const stack = new Stack(new App(), 'Shop');
    const fn = new Construct(stack, 'Billing');
    expect(() => assertLocalEsbuild(fn, nothingFound)).toThrow(
      /^Shop\/Billing: bundling its handler needs the npm package esbuild, which is not installed where aws-cdk-lib can load it nor on the PATH: npm install --save-dev esbuild in the CDK app .*idempotent-event-flow does not install it.*Without it aws-cdk-lib would bundle in Docker, which idempotent-event-flow never does/,
    );
  });

  test('missing where the stack need not bundle (cdk ls, or another stack selected): no error', () => {
    const stack = new Stack(new App({ context: { 'aws:cdk:bundling-stacks': ['Other'] } }), 'Shop');
    expect(() => assertLocalEsbuild(new Construct(stack, 'Billing'), nothingFound)).not.toThrow();
  });
});
