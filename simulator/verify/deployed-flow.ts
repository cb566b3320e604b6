/**
 * Where a deployed flow's resources are, found from its stacks as CloudFormation reports them (not from flags): each
 * subscriber from its `<subscriber>/Operator` output (../../lambda/contract/subscriber-deployment.ts: its queue,
 * dead-letter queues, filter policy, inbox and outbox tables), its consumer function from the output or from the event
 * source mapping of its queue (Lambda ListEventSourceMappings) and that function's environment (the effect probes read
 * its tables by it); each flow's outbox, relay dead-letter queue and topic from the flow's `Operator` output; every function
 * and table of the stacks from their resources (the producers are found among them, by the construct paths of the stack's
 * template, `GetTemplate`, as simulate finds them; `--cleanup` reads the tables).
 * Stacks nested in them (`AWS::CloudFormation::Stack`, at any depth) are read as theirs. Without `--stack`, the stacks
 * read are those with a subscriber's `Operator` output, then the stacks that own what those outputs name (each flow's
 * outbox table: the stack whose flow `Operator` output names it, else the stack CloudFormation says owns the table,
 * `DescribeStackResources` by `PhysicalResourceId`), then the stack each scenario producer names (review r12, R12-2).
 */
import { DescribeStackResourcesCommand, DescribeStacksCommand, GetTemplateCommand, paginateListStackResources, type Stack } from '@aws-sdk/client-cloudformation';
import { GetFunctionConfigurationCommand, paginateListEventSourceMappings, type EventSourceMappingConfiguration } from '@aws-sdk/client-lambda';
import { GetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import { parseSubscriberDeployment, type SubscriberDeployment } from '../../lambda/contract/subscriber-deployment';
import { ENV } from '../../lambda/contract/environment';
import { resourcesNamed, shownName } from '../model/find-resource';
import type { VerifyClients } from './clients';
import type { BucketExpiration } from './kept-payloads';

/** A subscriber of the deployed flow. */
export interface DeployedSubscriber {
  readonly name: string;
  readonly stackName: string;
  readonly deployment: SubscriberDeployment;
  /** Its consumer function's name. @default none found: its queue has no event source mapping */
  readonly consumerFunction?: string;
  /** The consumer's environment variables (what the scenario's effect probes read the tables by). */
  readonly environment: Readonly<Record<string, string>>;
  /**
   * The filters of its deployed subscription(s), as SNS answers GetSubscriptionAttributes (./subscription-filters.ts):
   * SNS delivers it a message one of them takes. @default not read: its Operator output's filter decides
   */
  readonly subscriptions?: readonly DeployedFilter[];
}

/** A deployed subscription's filter, as SNS answers GetSubscriptionAttributes. */
export interface DeployedFilter {
  readonly subscriptionArn: string;
  /** Its `FilterPolicy`, parsed. @default none: SNS delivers every message of the topic */
  readonly filterPolicy?: Readonly<Record<string, unknown>>;
  /** Its `FilterPolicyScope` (SNS's default `MessageAttributes` when it answers none). */
  readonly filterPolicyScope: 'MessageAttributes' | 'MessageBody';
}

/** A resource of the deployed stacks. */
export interface DeployedResource {
  readonly stackName: string;
  readonly logicalId: string;
  readonly type: string;
  readonly physicalId: string;
  /** Its construct path (the template's `aws:cdk:path` metadata). @default none: the template has no path metadata */
  readonly constructPath?: string;
}

/** The deployed flow. */
export interface DeployedFlow {
  readonly stackNames: readonly string[];
  readonly subscribers: readonly DeployedSubscriber[];
  /**
   * Each flow's outbox table, relay dead-letter queue and topic (its `Operator` output; verify lists the topic's
   * subscriptions: ./topic-subscriptions.ts). A flow without `topicArn` is not listed.
   */
  readonly flows: readonly { readonly outboxTable: string; readonly relayDeadLetterQueueUrl?: string; readonly topicArn?: string }[];
  /** Every resource of the stacks. */
  readonly resources: readonly DeployedResource[];
  /** The accounts the stacks are in (from their stack ids), sorted. @default not read */
  readonly accounts?: readonly string[];
  /** The account of each stack whose id names one, by stack name (a stack absent has no account verify can read). @default not read */
  readonly stackAccounts?: Readonly<Record<string, string>>;
  /**
   * The ordered relays' own dead-letter queues (their relay queue's, their pipe's), found among the resources by
   * construct path ({@link orderedRelayDeadLetterQueues}): an `OrderedRelay` has no `Operator` output. @default none
   */
  readonly orderedRelayDeadLetterQueues?: readonly OrderedRelayDeadLetterQueue[];
  /**
   * What finding the flow could not make sure of, one sentence each, for the verdict's NOT PROVEN: an `Operator` output
   * verify could not read (stack, output, why: what it describes is not checked; review v11, V11-9), a subscriber's
   * queue whose event source mappings are disabled or go to several functions (V11-8). @default none
   */
  readonly notProven?: readonly string[];
  /**
   * The expiring lifecycle rules of the stacks' buckets, by bucket name, as their templates declare them (what
   * `--cleanup` says of the run's offloaded objects: ./kept-payloads.ts). @default none
   */
  readonly bucketExpirations?: Readonly<Record<string, readonly BucketExpiration[]>>;
}

/** One dead-letter queue of an ordered relay. */
export interface OrderedRelayDeadLetterQueue {
  /** The relay's construct path, e.g. `Orders/Ordered`. */
  readonly relay: string;
  /** Which of its queues: its relay queue's DLQ or its pipe's. */
  readonly which: string;
  readonly url: string;
}

const RELAY_QUEUE_DLQ = /^(.+)\/RelayQueue\/DeadLetterQueue\/Resource$/;
const PIPE_DLQ = /^(.+)\/PipeDeadLetterQueue\/Resource$/;

/**
 * The ordered relays' dead-letter queues among `resources` (review v11, V11-10), by their construct paths: an
 * `OrderedRelay` at `<relay>` has `<relay>/RelayQueue/DeadLetterQueue` and `<relay>/PipeDeadLetterQueue` (construct ids
 * are public API); only a path holding both is a relay's. The standard relay's DLQ is the flow's `Operator` output's.
 */
export function orderedRelayDeadLetterQueues(resources: readonly DeployedResource[]): OrderedRelayDeadLetterQueue[] {
  const queues = resources.filter((resource) => resource.type === 'AWS::SQS::Queue' && resource.constructPath !== undefined);
  const relayQueues = new Map(queues.flatMap((resource) => { const match = RELAY_QUEUE_DLQ.exec(resource.constructPath!); return match === null ? [] : [[match[1]!, resource.physicalId] as const]; }));
  const pipeQueues = new Map(queues.flatMap((resource) => { const match = PIPE_DLQ.exec(resource.constructPath!); return match === null ? [] : [[match[1]!, resource.physicalId] as const]; }));
  return [...relayQueues].filter(([relay]) => pipeQueues.has(relay)).flatMap(([relay, url]) => [
    { relay, which: "relay queue's dead-letter queue", url },
    { relay, which: "pipe's dead-letter queue", url: pipeQueues.get(relay)! },
  ]);
}

/** Thrown when the stacks hold no flow verify can run. */
export class NoDeployedFlowError extends Error {
  public override readonly name = 'NoDeployedFlowError';
}

async function describeStacks(clients: VerifyClients, stackNames: readonly string[] | undefined): Promise<Stack[]> {
  if (stackNames !== undefined && stackNames.length > 0) {
    const stacks: Stack[] = [];
    for (const name of stackNames) stacks.push(...((await clients.cloudFormation.send(new DescribeStacksCommand({ StackName: name }))).Stacks ?? []));
    return stacks;
  }
  const stacks: Stack[] = [];
  let token: string | undefined;
  do {
    const page = await clients.cloudFormation.send(new DescribeStacksCommand({ NextToken: token }));
    stacks.push(...(page.Stacks ?? []));
    token = page.NextToken;
  } while (token !== undefined);
  return stacks;
}

/** Whether a stack output is an `Operator` output of this library (CDK's logical id of `<construct>/Operator`, or its description). */
export function isOperatorOutput(output: { readonly OutputKey?: string; readonly Description?: string }): boolean {
  return /Operator[0-9A-F]{8}$/.test(output.OutputKey ?? '') || (output.Description ?? '').startsWith('What operators of ');
}

/**
 * Why verify cannot read an `Operator` output as a subscriber's or a flow's: the subscriber parser's reason when it
 * names a subscriber (`subscriberName` or `format`), else what a flow's output lacks.
 */
export function unreadableOperatorOutput(value: string | undefined): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(value ?? '');
  } catch (error) {
    return `it is not JSON (${(error as Error).message})`;
  }
  const fields = typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>) : {};
  if (fields.subscriberName !== undefined || fields.format !== undefined) {
    try {
      parseSubscriberDeployment(value ?? '');
    } catch (error) {
      return `as a subscriber's: ${(error as Error).message}`;
    }
  }
  const missing = ['outboxTable', 'topicArn'].filter((field) => typeof fields[field] !== 'string');
  return `as a flow's: its field(s) ${missing.join(', ') || '(none)'} must be strings, but were ${missing.map((field) => JSON.stringify(fields[field]) ?? 'absent').join(', ')}`;
}

function subscriberOutput(value: string | undefined): SubscriberDeployment | undefined {
  if (value === undefined) return undefined;
  try {
    return parseSubscriberDeployment(value);
  } catch {
    return undefined;
  }
}

function flowOutput(value: string | undefined): { outboxTable: string; relayDeadLetterQueueUrl?: string; topicArn: string } | undefined {
  try {
    const parsed = JSON.parse(value ?? '') as { outboxTable?: unknown; relayDeadLetterQueueUrl?: unknown; topicArn?: unknown };
    if (typeof parsed.outboxTable !== 'string' || typeof parsed.topicArn !== 'string') return undefined;
    return { outboxTable: parsed.outboxTable, ...(typeof parsed.relayDeadLetterQueueUrl === 'string' ? { relayDeadLetterQueueUrl: parsed.relayDeadLetterQueueUrl } : {}), topicArn: parsed.topicArn };
  } catch {
    return undefined;
  }
}

/** The states of an event source mapping that consumes (or is about to): Lambda's `State`. */
const CONSUMING_STATES = ['Enabled', 'Enabling', 'Updating', 'Creating'];

/**
 * A subscriber's consumer among its queue's event source mappings (review v11, V11-8): an enabled one (the first, when
 * several go to different functions: said); none enabled, the first (its environment is still what the probes read),
 * and said: nothing consumes the queue. `notProven` is the sentence for the verdict. No mapping: none.
 */
export function chooseConsumer(
  subscriberName: string,
  mappings: readonly Pick<EventSourceMappingConfiguration, 'UUID' | 'FunctionArn' | 'State'>[],
): { readonly functionName?: string; readonly notProven?: string } {
  const withFunction = mappings.filter((mapping) => mapping.FunctionArn !== undefined);
  if (withFunction.length === 0) return {};
  const consuming = withFunction.filter((mapping) => CONSUMING_STATES.includes(mapping.State ?? 'Enabled'));
  const shown = (list: typeof withFunction) => list.map((mapping) => `${mapping.UUID ?? '?'} to ${mapping.FunctionArn!}: ${mapping.State ?? 'state unknown'}`).join('; ');
  if (consuming.length === 0) {
    return {
      functionName: withFunction[0]!.FunctionArn!,
      notProven: `${subscriberName}: its queue's event source mapping(s) are not enabled (${shown(withFunction)}): nothing consumes its queue, so the run's events wait there; enable the mapping (aws lambda update-event-source-mapping --enabled)`,
    };
  }
  const functions = new Set(consuming.map((mapping) => mapping.FunctionArn!));
  if (functions.size > 1) {
    return {
      functionName: consuming[0]!.FunctionArn!,
      notProven: `${subscriberName}: its queue has ${consuming.length} enabled event source mappings to different functions (${shown(consuming)}): each takes some of its messages; the effect probes read the first one's environment`,
    };
  }
  return { functionName: consuming[0]!.FunctionArn! };
}

async function consumerOf(clients: VerifyClients, deployment: SubscriberDeployment): Promise<{ readonly functionName?: string; readonly notProven?: string }> {
  if (deployment.consumerFunctionName !== undefined) return { functionName: deployment.consumerFunctionName };
  const attributes = await clients.sqs.send(new GetQueueAttributesCommand({ QueueUrl: deployment.queueUrl, AttributeNames: ['QueueArn'] }));
  const queueArn = attributes.Attributes?.QueueArn;
  if (queueArn === undefined) return {};
  const mappings: EventSourceMappingConfiguration[] = [];
  for await (const page of paginateListEventSourceMappings({ client: clients.lambda }, { EventSourceArn: queueArn })) mappings.push(...(page.EventSourceMappings ?? []));
  return chooseConsumer(deployment.subscriberName, mappings);
}

/**
 * The outbox table a subscriber emits its events into: its consumer's environment names it (the producer outbox
 * variable, set when the subscriber publishes events), or undefined when it emits none. Not its Operator output's
 * `outboxTable`: that names the flow's outbox (what `replay` reads) for every subscriber, emitting or not.
 */
export function emittedOutboxOf(subscriber: Pick<DeployedSubscriber, 'environment'>): string | undefined {
  const table = subscriber.environment[ENV.OUTBOX_TABLE_NAME];
  return table === undefined || table === '' ? undefined : table;
}

/** A template's resource, as far as verify reads it. */
interface TemplateResource {
  readonly Metadata?: Record<string, unknown>;
  readonly Properties?: { readonly LifecycleConfiguration?: { readonly Rules?: readonly Record<string, unknown>[] } };
}

/** A bucket's enabled rules that expire objects (`ExpirationInDays`), with their prefix (`Prefix`, or `Filter.Prefix`). */
export function bucketExpirations(resource: TemplateResource | undefined): BucketExpiration[] {
  return (resource?.Properties?.LifecycleConfiguration?.Rules ?? []).flatMap((rule) => {
    const days = rule.ExpirationInDays;
    if (rule.Status !== 'Enabled' || typeof days !== 'number') return [];
    const filter = rule.Filter as { Prefix?: unknown } | undefined;
    const prefix = typeof rule.Prefix === 'string' ? rule.Prefix : typeof filter?.Prefix === 'string' ? filter.Prefix : '';
    return [{ ...(typeof rule.Id === 'string' ? { ruleId: rule.Id } : {}), prefix, days }];
  });
}

/**
 * What verify reads of a stack's template: its resources' construct paths by logical id (the `aws:cdk:path` metadata)
 * and its resources' expiring lifecycle rules by logical id (a payload bucket's: what `--cleanup` says of the run's
 * objects); none for a template that is not JSON.
 */
async function templateFacts(clients: VerifyClients, stackId: string): Promise<{ readonly paths: ReadonlyMap<string, string>; readonly expirations: ReadonlyMap<string, BucketExpiration[]> }> {
  const body = (await clients.cloudFormation.send(new GetTemplateCommand({ StackName: stackId }))).TemplateBody ?? '';
  let template: { Resources?: Record<string, TemplateResource> };
  try {
    template = JSON.parse(body) as typeof template;
  } catch {
    return { paths: new Map(), expirations: new Map() };
  }
  const resources = Object.entries(template.Resources ?? {});
  return {
    paths: new Map(resources.flatMap(([logicalId, resource]) => {
      const constructPath = resource?.Metadata?.['aws:cdk:path'];
      return typeof constructPath === 'string' ? [[logicalId, constructPath] as const] : [];
    })),
    expirations: new Map(resources.flatMap(([logicalId, resource]) => {
      const rules = bucketExpirations(resource);
      return rules.length === 0 ? [] : [[logicalId, rules] as const];
    })),
  };
}

/** The stack a nested stack resource names (its physical id is the nested stack's id, an ARN), described. */
async function describeNested(clients: VerifyClients, stackId: string): Promise<Stack | undefined> {
  return (await clients.cloudFormation.send(new DescribeStacksCommand({ StackName: stackId }))).Stacks?.[0];
}

/** Whether CloudFormation answered that what was asked of it does not exist (a stack, the stack of a physical id). */
function isValidationError(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { name?: unknown }).name === 'ValidationError';
}

/**
 * The stack that owns the resource whose physical id is `physicalId` (CloudFormation `DescribeStackResources` by
 * `PhysicalResourceId`), described; none when no stack of these credentials owns it (`ValidationError`). Another
 * answer of CloudFormation (access denied, throttled) is `failed`, said; not reached at all, thrown (./aws-unreached.ts).
 */
async function owningStack(clients: VerifyClients, physicalId: string): Promise<{ readonly stack?: Stack; readonly failed?: string }> {
  let stackId: string | undefined;
  try {
    const answer = await clients.cloudFormation.send(new DescribeStackResourcesCommand({ PhysicalResourceId: physicalId }));
    stackId = answer.StackResources?.[0]?.StackId ?? answer.StackResources?.[0]?.StackName;
  } catch (error) {
    if (isValidationError(error)) return {};
    if (typeof error !== 'object' || error === null || !('$metadata' in error)) throw error;
    return { failed: `${(error as unknown as Error).name}: ${(error as unknown as Error).message}` };
  }
  const stack = stackId === undefined ? undefined : await describeNested(clients, stackId);
  return stack === undefined ? {} : { stack };
}

/**
 * Finds the flow in `stackNames` (when none is named: every stack of the account and Region with a subscriber's
 * Operator output, the stacks that own the outbox tables those outputs name, and the stack each of `producers` names:
 * its first path part, or the stack owning a function of that name), and in the stacks nested in them at any depth
 * (`AWS::CloudFormation::Stack` resources: each read once, also when CloudFormation lists it itself).
 */
export async function findDeployedFlow(
  clients: VerifyClients,
  stackNames?: readonly string[],
  /** The scenario's producer references (what {@link findDeployedFunction} resolves). @default none */
  producers: readonly string[] = [],
): Promise<DeployedFlow> {
  const chosen = (stackNames?.length ?? 0) > 0;
  const described = await describeStacks(clients, stackNames);
  // without --stack: every stack with a subscriber's Operator output, or an Operator output verify cannot read (named below)
  const stacks = described.filter(
    (stack) => chosen || (stack.Outputs ?? []).some((output) => subscriberOutput(output.OutputValue) !== undefined || (isOperatorOutput(output) && flowOutput(output.OutputValue) === undefined)),
  );
  const notProven: string[] = [];
  const subscribers: DeployedSubscriber[] = [];
  const flows: { outboxTable: string; relayDeadLetterQueueUrl?: string; topicArn?: string }[] = [];
  const resources: DeployedResource[] = [];
  const bucketRules: Record<string, BucketExpiration[]> = {};
  const seen = new Set(stacks.map((stack) => stack.StackId ?? stack.StackName ?? ''));
  const add = (stack: Stack | undefined): void => {
    const key = stack?.StackId ?? stack?.StackName ?? '';
    if (stack === undefined || seen.has(key)) return;
    seen.add(key);
    stacks.push(stack);
  };
  let next = 0;
  const readStacks = async (): Promise<void> => {
    for (; next < stacks.length; next += 1) {
      const stack = stacks[next]!;
      const stackName = stack.StackName ?? '';
      for (const output of stack.Outputs ?? []) {
        const flow = flowOutput(output.OutputValue);
        if (flow !== undefined) flows.push(flow);
        const deployment = subscriberOutput(output.OutputValue);
        if (deployment === undefined && flow === undefined && isOperatorOutput(output)) {
          notProven.push(
            `stack ${stackName}'s Operator output ${output.OutputKey ?? ''} could not be read ${unreadableOperatorOutput(output.OutputValue)} (another version of idempotent-event-flow deployed it?): the subscriber or flow it describes was not checked`,
          );
        }
        if (deployment === undefined) continue;
        const consumer = await consumerOf(clients, deployment);
        const consumerFunction = consumer.functionName;
        if (consumer.notProven !== undefined) notProven.push(consumer.notProven);
        const configuration = consumerFunction === undefined ? undefined : await clients.lambda.send(new GetFunctionConfigurationCommand({ FunctionName: consumerFunction }));
        subscribers.push({
          name: deployment.subscriberName,
          stackName,
          deployment,
          ...(consumerFunction === undefined ? {} : { consumerFunction }),
          environment: configuration?.Environment?.Variables ?? {},
        });
      }
      // by its id when it has one: it names exactly this stack (a nested stack's name is generated)
      const { paths, expirations } = await templateFacts(clients, stack.StackId ?? stackName);
      for await (const page of paginateListStackResources({ client: clients.cloudFormation }, { StackName: stack.StackId ?? stackName })) {
        for (const resource of page.StackResourceSummaries ?? []) {
          const logicalId = resource.LogicalResourceId ?? '';
          const constructPath = paths.get(logicalId);
          resources.push({ stackName, logicalId, type: resource.ResourceType ?? '', physicalId: resource.PhysicalResourceId ?? '', ...(constructPath === undefined ? {} : { constructPath }) });
          const rules = expirations.get(logicalId);
          if (resource.ResourceType === 'AWS::S3::Bucket' && rules !== undefined && resource.PhysicalResourceId !== undefined) bucketRules[resource.PhysicalResourceId] = rules;
          const nestedId = resource.PhysicalResourceId;
          if (resource.ResourceType !== 'AWS::CloudFormation::Stack' || nestedId === undefined || nestedId === '' || seen.has(nestedId)) continue;
          seen.add(nestedId);
          const nested = await describeNested(clients, nestedId);
          if (nested === undefined) throw new NoDeployedFlowError(`stack ${stackName}'s nested stack ${resource.LogicalResourceId ?? ''} (${nestedId}) could not be described: verify cannot see the subscribers or tables in it`);
          // CloudFormation lists a nested stack itself too: read once
          if (nested.StackName !== undefined && stacks.some((other) => other.StackId === nested.StackId)) continue;
          stacks.push(nested);
        }
      }
    }
  };
  await readStacks();
  if (!chosen) {
    // the flows' stacks: a flow's Operator output naming the outbox a subscriber's names, else the table's owner
    for (const outboxTable of [...new Set(subscribers.flatMap((subscriber) => (subscriber.deployment.outboxTable === undefined ? [] : [subscriber.deployment.outboxTable])))]) {
      if (flows.some((flow) => flow.outboxTable === outboxTable) || resources.some((resource) => resource.physicalId === outboxTable)) continue;
      const withFlowOutput = described.find((stack) => (stack.Outputs ?? []).some((output) => flowOutput(output.OutputValue)?.outboxTable === outboxTable));
      if (withFlowOutput !== undefined) {
        add(withFlowOutput);
        continue;
      }
      const owner = await owningStack(clients, outboxTable);
      add(owner.stack);
      if (owner.failed !== undefined) {
        notProven.push(
          `verify could not find the stack of outbox table ${outboxTable}, which subscriber(s) ${subscribers.filter((subscriber) => subscriber.deployment.outboxTable === outboxTable).map((subscriber) => subscriber.name).join(', ')} name (${owner.failed}): its flow's topic and relay were not read; give verify cloudformation:DescribeStackResources (docs/DEPLOYING.md) or pass --stack for each stack of the app`,
        );
      }
    }
    await readStacks();
    // the producers' stacks: the stack a reference starts with, else the owner of a function so named
    for (const reference of producers) {
      if (functionsNamed(resources, reference).length > 0) continue;
      // a failed look-up is left to the refusal that names the producer (findProducerFunction)
      add(described.find((stack) => stack.StackName === reference.split('/')[0]) ?? (await owningStack(clients, reference)).stack);
    }
    await readStacks();
  }
  if (subscribers.length === 0) {
    const where = (stackNames?.length ?? 0) > 0 ? `stack(s) ${stackNames!.join(', ')}` : 'any stack of this account and Region';
    throw new NoDeployedFlowError(`no subscriber's Operator output in ${where}${notProven.length === 0 ? '' : ` verify can read (${notProven.join('; ')})`}: deploy the app (cdk deploy), or name its stacks with --stack`);
  }
  // arn:aws:cloudformation:<region>:<account>:stack/<name>/<id>
  const stackAccounts = Object.fromEntries(stacks.flatMap((stack) => (stack.StackId?.split(':')[4] ? [[stack.StackName ?? '', stack.StackId.split(':')[4]!]] : [])));
  const accounts = [...new Set(Object.values(stackAccounts))].sort();
  const orderedDeadLetters = orderedRelayDeadLetterQueues(resources);
  return {
    stackNames: stacks.map((stack) => stack.StackName ?? ''),
    subscribers,
    flows,
    resources,
    accounts,
    stackAccounts,
    ...(orderedDeadLetters.length === 0 ? {} : { orderedRelayDeadLetterQueues: orderedDeadLetters }),
    ...(Object.keys(bucketRules).length === 0 ? {} : { bucketExpirations: bucketRules }),
    ...(notProven.length === 0 ? {} : { notProven }),
  };
}

/** The functions `reference` names among `resources` (see {@link findDeployedFunction}). */
function functionsNamed(resources: readonly DeployedResource[], reference: string): (DeployedResource & { readonly key: string })[] {
  const functions = resources.filter((resource) => resource.type === 'AWS::Lambda::Function');
  const keyed = functions.map((resource) => ({ ...resource, key: `${resource.stackName}/${resource.logicalId}` }));
  const named = resourcesNamed(keyed, reference);
  const byName = keyed.filter((resource) => resource.physicalId === reference);
  const joined = reference.replace(/[^A-Za-z0-9]/g, '');
  const byLogicalId = keyed.filter((resource) => resource.constructPath === undefined && new RegExp(`^${joined}[0-9A-F]{8}$`).test(resource.logicalId));
  return named.length > 0 ? named : byName.length > 0 ? byName : byLogicalId;
}

/**
 * The deployed function a scenario names, resolved as simulate resolves it (../model/find-resource.ts): its logical id,
 * `<stack>/<logical id>`, or its construct path (the template's `aws:cdk:path`) or a trailing part of it, e.g.
 * `Orders/Payments/PlaceOrder` or `Payments/PlaceOrder`; else its physical name. A function whose template has no path
 * metadata (`cdk synth --no-path-metadata`) is named by the path CDK made its logical id of (the parts joined, then 8
 * hex digits). Fails naming the functions there are.
 */
export function findDeployedFunction(flow: Pick<DeployedFlow, 'resources'>, reference: string): DeployedResource {
  const found = functionsNamed(flow.resources, reference);
  if (found.length !== 1) {
    const keyed = flow.resources.filter((resource) => resource.type === 'AWS::Lambda::Function').map((resource) => ({ ...resource, key: `${resource.stackName}/${resource.logicalId}` }));
    throw new NoDeployedFlowError(
      `the scenario's producer '${reference}' names ${found.length === 0 ? 'no' : 'more than one'} function of the stacks (${(found.length === 0 ? keyed : found).map(shownName).join(', ') || 'none'})${found.length > 1 ? '; give more of the construct path' : ''}`,
    );
  }
  const { key: _key, ...resource } = found[0]!;
  return resource;
}

/**
 * {@link findDeployedFunction} for verify's run: when no `--stack` chose the stacks (`stackNames` empty) and the
 * reference names no function, the refusal also names the stacks verify read and says to pass `--stack` for each.
 */
export function findProducerFunction(flow: Pick<DeployedFlow, 'resources' | 'stackNames'>, reference: string, stackNames: readonly string[] | undefined): DeployedResource {
  try {
    return findDeployedFunction(flow, reference);
  } catch (error) {
    if ((stackNames?.length ?? 0) > 0 || functionsNamed(flow.resources, reference).length > 0) throw error;
    throw new NoDeployedFlowError(
      `${(error as Error).message}; verify read the stacks ${flow.stackNames.join(', ')} (no --stack: those with a subscriber's Operator output, its flow's and the one the producer's path starts with): pass --stack for each stack of the app (the producer's, the flow's, each subscriber's)`,
    );
  }
}
