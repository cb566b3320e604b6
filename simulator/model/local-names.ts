/**
 * The names the simulated resources get on this machine, and what `Ref` / `Fn::GetAtt` of each resolve to (the
 * {@link LocalNames} that environment variables are resolved with). A name is the template's own (`TableName`,
 * `QueueName`, ...) when it sets one, else `<stack>-<logical id>`, as CloudFormation would generate a unique one.
 */
import type { FlowModel, LocalNames, ModelledResource, ResourceKey } from './flow-model';
import { LOCAL_ACCOUNT_ID, stackOfKey, type StackEnvironment, type StackEnvironments } from './stack-environments';

export { LOCAL_ACCOUNT_ID };

/** What the simulator knows of each resource once it exists locally. */
export interface LocalResource {
  /** `Ref` */
  readonly ref: string;
  /** `Fn::GetAtt` attributes */
  readonly attributes: Readonly<Record<string, string>>;
}

/** The local names of a run, filled in as resources are created. */
export class LocalResourceNames implements LocalNames {
  public readonly accountId = LOCAL_ACCOUNT_ID;
  private readonly resources = new Map<ResourceKey, LocalResource>();

  /**
   * @param region the run's Region
   * @param environments each stack's account and Region, when any stack names one (./stack-environments.ts)
   */
  public constructor(
    public readonly region: string,
    private readonly environments?: StackEnvironments,
  ) {}

  public environmentOf(stackName: string): StackEnvironment | undefined {
    return this.environments?.get(stackName);
  }

  /** The account a resource lives in: its stack's, else the local one. */
  public accountOf(key: ResourceKey): string {
    return this.environmentOf(stackOfKey(key))?.account ?? this.accountId;
  }

  /** The Region a resource lives in: its stack's, else the run's. */
  public regionOf(key: ResourceKey): string {
    return this.environmentOf(stackOfKey(key))?.region ?? this.region;
  }

  /** Registers what a resource's `Ref` and attributes resolve to. */
  public register(key: ResourceKey, resource: LocalResource): void {
    this.resources.set(key, resource);
  }

  public ref(key: ResourceKey): string | undefined {
    return this.resources.get(key)?.ref;
  }

  public getAtt(key: ResourceKey, attribute: string): string | undefined {
    return this.resources.get(key)?.attributes[attribute];
  }

  /** `arn:aws:<service>:<region>:<account>:<resource>`, in the environment of the resource `of` when given. */
  public arn(service: string, resource: string, of?: ResourceKey): string {
    const region = of === undefined ? this.region : this.regionOf(of);
    const account = of === undefined ? this.accountId : this.accountOf(of);
    return `arn:aws:${service}:${region}:${account}:${resource}`;
  }
}

/** `<stack>-<logical id>`, cut to `maxLength` (a hash-free cut is enough: keys are unique per assembly). */
export function generatedName(resource: ModelledResource, maxLength: number, suffix = ''): string {
  const base = `${resource.stackName}-${resource.logicalId}`.replace(/[^A-Za-z0-9_.-]/g, '-');
  return `${base.slice(0, maxLength - suffix.length)}${suffix}`;
}

/** Registers the functions and topics, whose local names need nothing created first. */
export function registerStaticNames(model: Pick<FlowModel, 'functions' | 'topics'>, names: LocalResourceNames): void {
  for (const fn of model.functions) {
    const functionName = generatedName(fn, 64);
    names.register(fn.key, { ref: functionName, attributes: { Arn: names.arn('lambda', `function:${functionName}`, fn.key) } });
  }
  for (const topic of model.topics) {
    const topicName = topic.topicName ?? generatedName(topic, 256);
    const arn = names.arn('sns', topicName, topic.key);
    names.register(topic.key, { ref: arn, attributes: { TopicArn: arn, TopicName: topicName } });
  }
}
