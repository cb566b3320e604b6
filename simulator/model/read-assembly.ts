/**
 * Reads a synthesized cloud assembly into the {@link FlowModel} the simulator runs: every table, outbox relay, topic,
 * subscription, queue, event source mapping and function of the selected stacks, with CloudFormation's defaults
 * applied. What the templates hold that the simulator cannot run (another subscription protocol, inline code, a
 * reference to a resource outside the templates, ...) becomes a line of `notSimulated`, never an error; a property
 * value that would not deploy (e.g. `maxReceiveCount: 0`) is an error naming the resource, the property and the value.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { type AssemblyStack, listStacks } from './assembly-manifest';
import { linkFlow, type UnlinkedFlow } from './flow-links';
import type { BucketModel, FlowModel } from './flow-model';
import { RESOURCE_TYPES } from './references';
import { readAccessModel } from './resources/access';
import { readBucket } from './resources/bucket';
import { readEventSourceMapping } from './resources/event-source-mapping';
import { readFunction } from './resources/function';
import { readQueue } from './resources/queue';
import { readQueueAlarms } from './resources/queue-alarms';
import { readRelay } from './resources/relay';
import { readSubscription } from './resources/subscription';
import { readTable } from './resources/table';
import { readTopic } from './resources/topic';
import { EnvironmentPlacementError, stackEnvironments, type StackEnvironments } from './stack-environments';
import { StackIndex, StackTemplate, type TemplateResource } from './stack-template';
import { NotSimulatedError } from './template-values';

/** Options of {@link readAssembly}. */
export interface ReadAssemblyOptions {
  /**
   * The stacks to read, each named by its stack name, artifact id or construct path (`displayName`).
   * @default every stack of the assembly and its nested (Stage) assemblies
   */
  readonly stacks?: readonly string[];
  /**
   * The Region of the stacks when some name their account but none names a Region (./stack-environments.ts).
   * @default 'us-east-1'
   */
  readonly region?: string;
}

/**
 * Resource types that carry messages or invoke functions in ways the simulator does not emulate: each resource of
 * these types is listed as not simulated.
 */
const UNSIMULATED_MESSAGE_PATHS: Readonly<Record<string, string>> = {
  'AWS::CloudFormation::Stack': 'nested stacks are not read',
  'AWS::Events::Rule': 'EventBridge rules are not simulated',
  'AWS::Scheduler::Schedule': 'EventBridge Scheduler schedules are not simulated',
  'AWS::Kinesis::Stream': 'Kinesis streams are not simulated',
  'AWS::StepFunctions::StateMachine': 'Step Functions state machines are not simulated',
  'AWS::Lambda::Url': 'function URLs are not simulated',
  'AWS::ApiGateway::RestApi': 'API Gateway APIs are not simulated',
  'AWS::ApiGatewayV2::Api': 'API Gateway APIs are not simulated',
};

/** The stacks option names a stack the assembly does not have (or two stacks share a name): the caller's mistake. */
export class StackSelectionError extends Error {
  public override readonly name = 'StackSelectionError';
}

/** Reads the cloud assembly (manifest.json + each stack's template) into the flow the simulator runs. */
export function readAssembly(assemblyDirectory: string, options: ReadAssemblyOptions = {}): FlowModel {
  const directory = path.resolve(assemblyDirectory);
  const all = listStacks(directory);
  // the model names each stack by its stack name, unique only per account and Region: two stacks of one name (in two
  // environments) are named by their artifact ids (or construct paths) instead
  const stacks = uniquelyNamed(selectStacks(all, options.stacks));
  const environments = placeStacks(stacks, options.region);
  // every stack's outputs, so that a reference from a selected stack into one that is not can say so
  const index = new StackIndex();
  if (environments !== undefined) index.environments = environments;
  const templates = stacks.map((stack) => ({ stack, body: readTemplate(stack) }));
  for (const { stack, body } of templates) index.addOutputs(stack.stackName, body);
  for (const stack of all) if (!stacks.some((selected) => selected.templateFile === stack.templateFile) && !index.hasStack(stack.stackName)) index.addOutputs(stack.stackName, readTemplateIfAny(stack));
  const flow: UnlinkedFlow = {
    tables: [],
    relays: [],
    topics: [],
    subscriptions: [],
    queues: [],
    eventSourceMappings: [],
    functions: [],
    notSimulated: [],
  };
  // every selected template is in the index before any resource is read: references may point forward
  const stackTemplates = templates.map(({ stack, body }) => new StackTemplate(stack.stackName, stack.assemblyDirectory, body, index, readFileAssets(stack)));
  for (const template of stackTemplates) {
    for (const resource of template.resources) readResource(resource, flow);
  }
  const resources = stackTemplates.flatMap((template) => template.resources);
  const access = readAccessModel(resources);
  const buckets = readBuckets(resources);
  return {
    assemblyDirectory: directory,
    stackNames: stacks.map((stack) => stack.stackName),
    ...linkFlow(flow),
    ...(buckets.length === 0 ? {} : { buckets }),
    access,
    queueAlarms: readQueueAlarms(resources),
    ...(environments === undefined ? {} : { environments }),
  };
}

/** How each flow resource type is read into the flow (what a reader only partly simulates, it says in `notSimulated`). */
const READERS: Readonly<Record<string, (resource: TemplateResource, flow: UnlinkedFlow) => void>> = {
  [RESOURCE_TYPES.TABLE]: (resource, flow) => flow.tables.push(readTable(resource)),
  [RESOURCE_TYPES.GLOBAL_TABLE]: (resource, flow) => flow.tables.push(readTable(resource)),
  [RESOURCE_TYPES.PIPE]: (resource, flow) => flow.relays.push(readRelay(resource, flow.notSimulated)),
  [RESOURCE_TYPES.TOPIC]: (resource, flow) => flow.topics.push(readTopic(resource, flow.notSimulated)),
  [RESOURCE_TYPES.SUBSCRIPTION]: (resource, flow) => flow.subscriptions.push(readSubscription(resource, flow.notSimulated)),
  [RESOURCE_TYPES.QUEUE]: (resource, flow) => flow.queues.push(readQueue(resource, flow.notSimulated)),
  [RESOURCE_TYPES.EVENT_SOURCE_MAPPING]: (resource, flow) => flow.eventSourceMappings.push(readEventSourceMapping(resource)),
  [RESOURCE_TYPES.FUNCTION]: (resource, flow) => flow.functions.push(readFunction(resource, flow.notSimulated)),
};

/** The buckets of the templates; one that exists only under a condition is not simulated (its requests then fail). */
function readBuckets(resources: readonly TemplateResource[]): BucketModel[] {
  return resources.filter((resource) => resource.type === RESOURCE_TYPES.BUCKET && resource.condition === undefined).map(readBucket);
}

/** Reads one resource into the flow; a resource the simulator cannot run becomes a line of `notSimulated`. */
function readResource(resource: TemplateResource, flow: UnlinkedFlow): void {
  const reader = READERS[resource.type];
  try {
    if (reader === undefined) {
      const reason = UNSIMULATED_MESSAGE_PATHS[resource.type];
      if (reason !== undefined) throw new NotSimulatedError(resource, reason);
      return;
    }
    if (resource.condition !== undefined) {
      throw new NotSimulatedError(resource, `it exists only when condition ${resource.condition} holds, and conditions are not evaluated`);
    }
    reader(resource, flow);
  } catch (error) {
    if (!(error instanceof NotSimulatedError)) throw error;
    flow.notSimulated.push(error.message);
  }
}

/**
 * Each stack's environment when any stack names one (one explicit environment, or several: a subscriber in another
 * account or Region, docs/CROSS-ACCOUNT.md): each resource is then simulated in its own stack's environment. A stack of
 * no known environment beside stacks of several is refused, naming it.
 */
function placeStacks(stacks: readonly AssemblyStack[], region: string | undefined): StackEnvironments | undefined {
  try {
    return stackEnvironments(stacks, describeStack, region);
  } catch (error) {
    if (error instanceof EnvironmentPlacementError) throw new StackSelectionError(error.message);
    throw error;
  }
}

/** `Stage/Stack (stack name Stage-Stack)`: the construct path, and the stack name when it differs. */
function describeStack(stack: AssemblyStack): string {
  return stack.stackName === stack.displayName ? stack.displayName : `${stack.displayName} (stack name ${stack.stackName})`;
}

function selectStacks(stacks: AssemblyStack[], wanted: readonly string[] | undefined): AssemblyStack[] {
  const matches = (stack: AssemblyStack, name: string): boolean =>
    stack.stackName === name || stack.artifactId === name || stack.displayName === name;
  for (const name of wanted ?? []) {
    const found = stacks.filter((stack) => matches(stack, name));
    if (found.length === 0) {
      throw new StackSelectionError(`no stack of the app is ${name}; its stacks: ${stacks.map(describeStack).join(', ') || '(none)'}`);
    }
    if (found.length > 1 && !found.some((stack) => stack.artifactId === name || stack.displayName === name)) {
      throw new StackSelectionError(
        `${found.length} stacks of the app are named ${name} (${found.map((stack) => `${stack.displayName} in ${stack.environment ?? 'no environment'}`).join(', ')}); ` +
          'select each by its artifact id or construct path with the stacks option (--stack)',
      );
    }
  }
  const selected = wanted === undefined ? stacks : stacks.filter((stack) => wanted.some((name) => matches(stack, name)));
  for (const stack of selected) {
    const other = selected.find((candidate) => candidate !== stack && candidate.stackName === stack.stackName && candidate.environment === stack.environment);
    if (other !== undefined) {
      throw new StackSelectionError(
        `the app has two stacks named ${stack.stackName} (${stack.displayName} and ${other.displayName})${stack.environment === undefined ? '' : ` in ${stack.environment}`}; ` +
          'select one of them with the stacks option (--stack)',
      );
    }
  }
  return selected;
}

/**
 * The stacks, each with a stack name no other has: a stack name shared by several stacks (legal in different accounts
 * or Regions: CloudFormation's stack names are unique per account and Region; two in one environment are refused by
 * {@link selectStacks}) is replaced by the stack's artifact id,
 * or, when that is shared too (nested assemblies), its construct path.
 */
function uniquelyNamed(stacks: readonly AssemblyStack[]): AssemblyStack[] {
  const count = (name: (stack: AssemblyStack) => string, value: string) => stacks.filter((stack) => name(stack) === value).length;
  return stacks.map((stack) => {
    if (count((other) => other.stackName, stack.stackName) === 1) return stack;
    const stackName = count((other) => other.artifactId, stack.artifactId) === 1 ? stack.artifactId : stack.displayName;
    return { ...stack, stackName };
  });
}

/**
 * The file assets of the stack's asset manifests, by the S3 object key each is published to: the absolute path of its
 * source. An unreadable manifest adds none (the asset metadata of the template, when there is any, still works).
 */
function readFileAssets(stack: AssemblyStack): Map<string, string> {
  const assets = new Map<string, string>();
  for (const file of stack.assetManifestFiles) {
    let manifest: unknown;
    try {
      manifest = JSON.parse(fs.readFileSync(file, 'utf8'));
    } catch {
      continue;
    }
    const files = isObject(manifest) && isObject(manifest.files) ? manifest.files : {};
    for (const asset of Object.values(files)) {
      if (!isObject(asset) || !isObject(asset.source) || typeof asset.source.path !== 'string') continue;
      const source = path.resolve(path.dirname(file), asset.source.path);
      for (const destination of Object.values(isObject(asset.destinations) ? asset.destinations : {})) {
        if (isObject(destination) && typeof destination.objectKey === 'string') assets.set(destination.objectKey, source);
      }
    }
  }
  return assets;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A template of a stack that is not selected, read only for its outputs: unreadable is as good as none. */
function readTemplateIfAny(stack: AssemblyStack): unknown {
  try {
    return readTemplate(stack);
  } catch {
    return {};
  }
}

function readTemplate(stack: AssemblyStack): unknown {
  try {
    return JSON.parse(fs.readFileSync(stack.templateFile, 'utf8'));
  } catch (error) {
    throw new Error(`Cannot read the template of stack ${stack.stackName} (${stack.templateFile}): ${(error as Error).message}`);
  }
}
