/**
 * The local esbuild that NodejsFunction bundles with. aws-cdk-lib looks for it the way {@link detectLocalEsbuild} does
 * (`esbuild/package.json` loadable from aws-cdk-lib, else `esbuild --version` on the PATH) and, finding none, falls back
 * to bundling in Docker. This library never bundles in Docker, so a missing esbuild fails at synth with what to install.
 */
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { Stack } from 'aws-cdk-lib';
import type { IConstruct } from 'constructs';

/** Where esbuild was found, as aws-cdk-lib would find it; undefined when it would not. */
export function detectLocalEsbuild(): string | undefined {
  try {
    const fromCdk = createRequire(require.resolve('aws-cdk-lib/aws-lambda-nodejs'));
    return `esbuild ${(fromCdk('esbuild/package.json') as { version: string }).version} (node_modules)`;
  } catch {
    // not loadable from aws-cdk-lib: aws-cdk-lib then tries the PATH
  }
  const proc = spawnSync('esbuild', ['--version'], { encoding: 'utf8' });
  return proc.status === 0 && proc.error === undefined ? `esbuild ${proc.stdout.trim()} (PATH)` : undefined;
}

let detected: { readonly found: string | undefined } | undefined;

/**
 * Throws when the stack must bundle assets and no local esbuild is found (aws-cdk-lib would then run Docker), naming
 * the function and what to install. Detection runs once per process.
 */
export function assertLocalEsbuild(scope: IConstruct, detect: () => string | undefined = detectLocalEsbuild): void {
  if (!Stack.of(scope).bundlingRequired) return;
  const found = detect === detectLocalEsbuild ? (detected ??= { found: detect() }).found : detect();
  if (found !== undefined) return;
  throw new Error(
    `${scope.node.path}: bundling its handler needs the npm package esbuild, which is not installed where aws-cdk-lib can ` +
      'load it nor on the PATH: npm install --save-dev esbuild in the CDK app (as aws-cdk-lib\'s NodejsFunction requires; ' +
      'idempotent-event-flow does not install it, since a jsii constructs library can have it neither as a dependency nor as a ' +
      'peer). Without it aws-cdk-lib would bundle in Docker, which idempotent-event-flow never does (its bundles are built by ' +
      'the local esbuild, so the deployed code is the tested code)',
  );
}
