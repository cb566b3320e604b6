/**
 * The synth's warnings and errors (`Annotations.of(...).addWarningV2` / `addError`, an Aspect's findings, cdk-nag's),
 * as the cloud assembly records them: metadata entries of type `aws:cdk:warning` and `aws:cdk:error` of each stack
 * artifact of manifest.json (inline, or in its `additionalMetadataFile`), by construct path, and the findings of the
 * synth's validation plugins (`validation-report.json`). `cdk synth` prints them; a run shows them too, so a warning such as a
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

/**
 * A stack artifact's metadata by construct path: inline (`metadata`), and in the file recent CDK versions write it to
 * (`additionalMetadataFile`, e.g. `Stack.metadata.json`, relative to the assembly).
 */
function metadataOf(artifact: unknown, assemblyDirectory: string): [string, unknown][] {
  if (!isObject(artifact)) return [];
  const entries: [string, unknown][] = isObject(artifact.metadata) ? Object.entries(artifact.metadata) : [];
  if (typeof artifact.additionalMetadataFile === 'string') {
    const parsed: unknown = JSON.parse(fs.readFileSync(path.resolve(assemblyDirectory, artifact.additionalMetadataFile), 'utf8'));
    if (isObject(parsed)) entries.push(...Object.entries(parsed));
  }
  return entries;
}

/** The warnings and errors of the stacks named `stackNames` (CloudFormation stack names), in manifest order. */
export function readSynthAnnotations(assemblyDirectory: string, stackNames: readonly string[]): SynthAnnotation[] {
  const manifests = new Map<string, Record<string, unknown>>();
  const annotations: SynthAnnotation[] = [];
  const selected = listStacks(assemblyDirectory).filter((stack) => stackNames.includes(stack.stackName));
  for (const stack of selected) {
    let manifest = manifests.get(stack.assemblyDirectory);
    if (manifest === undefined) {
      const parsed: unknown = JSON.parse(fs.readFileSync(path.join(stack.assemblyDirectory, 'manifest.json'), 'utf8'));
      manifest = isObject(parsed) && isObject(parsed.artifacts) ? parsed.artifacts : {};
      manifests.set(stack.assemblyDirectory, manifest);
    }
    const artifact = manifest[stack.artifactId];
    for (const [constructPath, entries] of metadataOf(artifact, stack.assemblyDirectory)) {
      if (!Array.isArray(entries)) continue;
      for (const entry of entries) {
        const level = isObject(entry) && typeof entry.type === 'string' ? LEVELS[entry.type] : undefined;
        if (level === undefined || !isObject(entry)) continue;
        annotations.push({ level, path: constructPath, message: typeof entry.data === 'string' ? entry.data : JSON.stringify(entry.data) });
      }
    }
  }
  return [...annotations, ...validationFindings(assemblyDirectory, selected.map((stack) => stack.displayName))];
}

/**
 * The findings of the synth's validation plugins (`validation-report.json` at the assembly's root: CloudFormation
 * validation, policy validation plugins) on constructs of the stacks whose construct paths are `stackPaths`.
 */
function validationFindings(assemblyDirectory: string, stackPaths: readonly string[]): SynthAnnotation[] {
  const file = path.join(assemblyDirectory, 'validation-report.json');
  if (!fs.existsSync(file)) return [];
  const report: unknown = JSON.parse(fs.readFileSync(file, 'utf8'));
  const plugins = isObject(report) && Array.isArray(report.pluginReports) ? report.pluginReports : [];
  const findings: SynthAnnotation[] = [];
  for (const plugin of plugins) {
    if (!isObject(plugin) || !Array.isArray(plugin.violations)) continue;
    for (const violation of plugin.violations) {
      const level = isObject(violation) ? (violation.severity === 'error' ? 'error' : violation.severity === 'warning' ? 'warning' : undefined) : undefined;
      if (level === undefined || !isObject(violation) || !Array.isArray(violation.violatingConstructs)) continue;
      for (const construct of violation.violatingConstructs) {
        const constructPath = isObject(construct) && typeof construct.constructPath === 'string' ? construct.constructPath : undefined;
        if (constructPath === undefined || !stackPaths.some((stack) => constructPath === stack || constructPath.startsWith(`${stack}/`))) continue;
        findings.push({ level, path: `/${constructPath}`, message: `${String(plugin.pluginName)} ${String(violation.ruleName)}: ${String(violation.description)}` });
      }
    }
  }
  return findings;
}
