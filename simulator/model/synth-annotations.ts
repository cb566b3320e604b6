/**
 * The synth's warnings and errors (`Annotations.of(...).addWarningV2` / `addError`, an Aspect's findings, cdk-nag's),
 * as the cloud assembly records them: metadata entries of type `aws:cdk:warning` and `aws:cdk:error` of each stack
 * artifact in manifest.json, by construct path. `cdk synth` prints them; a run shows them too, so a warning such as a
 * function timeout above its queue's visibility timeout is not lost between the two commands.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { listStacks } from './assembly-manifest';

/** One warning or error of the synth. */
export interface SynthAnnotation {
  readonly level: 'warning' | 'error';
  /** The construct path it is attached to, e.g. `/Orders/Consumer/Resource`. */
  readonly path: string;
  readonly message: string;
}

const LEVELS: Readonly<Record<string, SynthAnnotation['level']>> = { 'aws:cdk:warning': 'warning', 'aws:cdk:error': 'error' };

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The warnings and errors of the stacks named `stackNames` (CloudFormation stack names), in manifest order. */
export function readSynthAnnotations(assemblyDirectory: string, stackNames: readonly string[]): SynthAnnotation[] {
  const manifests = new Map<string, Record<string, unknown>>();
  const annotations: SynthAnnotation[] = [];
  for (const stack of listStacks(assemblyDirectory)) {
    if (!stackNames.includes(stack.stackName)) continue;
    let manifest = manifests.get(stack.assemblyDirectory);
    if (manifest === undefined) {
      const parsed: unknown = JSON.parse(fs.readFileSync(path.join(stack.assemblyDirectory, 'manifest.json'), 'utf8'));
      manifest = isObject(parsed) && isObject(parsed.artifacts) ? parsed.artifacts : {};
      manifests.set(stack.assemblyDirectory, manifest);
    }
    const artifact = manifest[stack.artifactId];
    const metadata = isObject(artifact) && isObject(artifact.metadata) ? artifact.metadata : {};
    for (const [constructPath, entries] of Object.entries(metadata)) {
      if (!Array.isArray(entries)) continue;
      for (const entry of entries) {
        const level = isObject(entry) && typeof entry.type === 'string' ? LEVELS[entry.type] : undefined;
        if (level === undefined || !isObject(entry)) continue;
        annotations.push({ level, path: constructPath, message: typeof entry.data === 'string' ? entry.data : JSON.stringify(entry.data) });
      }
    }
  }
  return annotations;
}
