/**
 * One version across the packages: the constructs (`idempotent-event-flow`) and the runtime a handler is bundled with
 * (`@idempotent-event-flow/runtime`) share the wire format, the environment contract and the metric names
 * (lambda/contract/), so a runtime of another version may write items the relay filters out or read variables the
 * constructs no longer set. Synth fails when the handler's runtime is not the constructs' version.
 */
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import * as path from 'node:path';
import { Stack } from 'aws-cdk-lib';
import type { IConstruct } from 'constructs';
import { validationError } from './validation-error';

/** The constructs package's name, and the runtime package's. */
export const CONSTRUCTS_PACKAGE = 'idempotent-event-flow';
export const RUNTIME_PACKAGE = '@idempotent-event-flow/runtime';

/** A package's name and version, and where its package.json is. */
export interface PackageVersion {
  readonly version: string;
  readonly manifest: string;
}

function readVersion(manifest: string): PackageVersion {
  return { version: (JSON.parse(fs.readFileSync(manifest, 'utf8')) as { version: string }).version, manifest };
}

/** The constructs package's own version: the nearest package.json above this file named `idempotent-event-flow`. */
export function constructsVersion(from: string = __dirname): PackageVersion {
  for (let directory = from; ; directory = path.dirname(directory)) {
    const manifest = path.join(directory, 'package.json');
    if (fs.existsSync(manifest) && (JSON.parse(fs.readFileSync(manifest, 'utf8')) as { name?: string }).name === CONSTRUCTS_PACKAGE) return readVersion(manifest);
    if (path.dirname(directory) === directory) throw new Error(`the package.json of ${CONSTRUCTS_PACKAGE} was not found above ${from}`);
  }
}

/** The runtime package the handler `entry` resolves (as esbuild will bundle it), or undefined when it resolves none. */
export function runtimeVersionFor(entry: string): PackageVersion | undefined {
  let manifest: string;
  try {
    manifest = createRequire(path.resolve(entry)).resolve(`${RUNTIME_PACKAGE}/package.json`);
  } catch {
    return undefined; // not installed where the handler is: its bundling fails on its own if the handler imports it
  }
  return readVersion(manifest);
}

/**
 * Throws when the stack bundles the handler `entry` with a `@idempotent-event-flow/runtime` whose version differs from
 * the constructs', naming both versions and where each was found.
 */
export function assertRuntimeVersion(scope: IConstruct, entry: string, constructs: PackageVersion = constructsVersion()): void {
  if (!Stack.of(scope).bundlingRequired) return;
  const runtime = runtimeVersionFor(entry);
  if (runtime === undefined || runtime.version === constructs.version) return;
  throw validationError(
    `${scope.node.path}: the handler ${entry} is bundled with ${RUNTIME_PACKAGE} ${runtime.version} (${runtime.manifest}), but the constructs ` +
      `are ${CONSTRUCTS_PACKAGE} ${constructs.version} (${constructs.manifest}); the two share the wire format and the environment ` +
      `contract, so they must be the same version: npm install ${RUNTIME_PACKAGE}@${constructs.version} (or ${CONSTRUCTS_PACKAGE}@${runtime.version})`,
  );
}
