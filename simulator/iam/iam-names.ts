/**
 * The ARNs IAM evaluation sees: every resource of the templates gets the ARN it would have in AWS, with the run's
 * account and region (its pseudo parameters) and its local name. A table is `arn:aws:dynamodb:<region>:<account>:table/<name>`
 * here, although DynamoDB Local calls it `arn:aws:dynamodb:ddblocal:...`; a key gets a key id derived from its logical
 * id; a role is `arn:aws:iam::<account>:role/<name>`. Policy documents are resolved with these names
 * ({@link IamNames} is a {@link LocalNames}), and requests are authorized against the same ARNs.
 */
import { deterministicUuid } from '../aws/message-ids';
import type { NamedResource } from '../model/access-model';
import type { LocalNames, ResourceKey } from '../model/flow-model';
import { generatedName } from '../model/local-names';
import { stackOfKey, type StackEnvironment } from '../model/stack-environments';

/** How each resource type's ARN and `Ref` are made, for the types no simulated service names. */
const ARN_FORMATS: Readonly<Record<string, { readonly service: string; readonly arn: (name: string) => string; readonly global?: boolean }>> = {
  'AWS::IAM::Role': { service: 'iam', arn: (name) => `role/${name}`, global: true },
  'AWS::IAM::ManagedPolicy': { service: 'iam', arn: (name) => `policy/${name}`, global: true },
  'AWS::Logs::LogGroup': { service: 'logs', arn: (name) => `log-group:${name}:*` },
  'AWS::Pipes::Pipe': { service: 'pipes', arn: (name) => `pipe/${name}` },
  'AWS::CloudWatch::Alarm': { service: 'cloudwatch', arn: (name) => `alarm:${name}` },
};

/** The ARNs of a run's resources for IAM; see the module comment. */
export class IamNames implements LocalNames {
  public readonly region: string;
  public readonly accountId: string;
  private readonly names: LocalNames;
  private readonly resources: Readonly<Record<ResourceKey, NamedResource>>;
  private readonly tables: ReadonlyMap<ResourceKey, { readonly tableName: string; readonly streamLabel?: string }>;

  /**
   * @param names the run's local names (queue URLs and ARNs, topic ARNs, function names)
   * @param resources every resource of the templates, with its type
   * @param tables each table's local name and the label of its stream (the part after `/stream/`), when it has one
   */
  public constructor(
    names: LocalNames,
    resources: Readonly<Record<ResourceKey, NamedResource>>,
    tables: ReadonlyMap<ResourceKey, { readonly tableName: string; readonly streamLabel?: string }>,
  ) {
    this.names = names;
    this.region = names.region;
    this.accountId = names.accountId;
    this.resources = resources;
    this.tables = tables;
  }

  /**
   * `arn:aws:<service>:<region>:<account>:<resource>`; no region for a global service. In the environment of the
   * resource `of` when given (a run whose stacks span accounts or Regions: ../model/stack-environments.ts).
   */
  public arn(service: string, resource: string, global = false, of?: ResourceKey): string {
    const region = of === undefined ? this.region : this.regionOf(of);
    return `arn:aws:${service}:${global ? '' : region}:${of === undefined ? this.accountId : this.accountOf(of)}:${resource}`;
  }

  public environmentOf(stackName: string): StackEnvironment | undefined {
    return this.names.environmentOf?.(stackName);
  }

  /** The account a resource of the templates lives in (its stack's; the run's in a run of one environment). */
  public accountOf(key: ResourceKey): string {
    return this.environmentOf(stackOfKey(key))?.account ?? this.accountId;
  }

  /** The Region a resource of the templates lives in (its stack's; the run's in a run of one environment). */
  public regionOf(key: ResourceKey): string {
    return this.environmentOf(stackOfKey(key))?.region ?? this.region;
  }

  /** The ARN of a table of the templates. */
  public tableArn(key: ResourceKey): string | undefined {
    const table = this.tables.get(key);
    return table === undefined ? undefined : this.arn('dynamodb', `table/${table.tableName}`, false, key);
  }

  /** The ARN of a table's stream. */
  public streamArn(key: ResourceKey): string | undefined {
    const table = this.tables.get(key);
    return table?.streamLabel === undefined ? undefined : `${this.tableArn(key)!}/stream/${table.streamLabel}`;
  }

  /** The id of a KMS key of the templates (a UUID derived from its key: stable from run to run). */
  public keyId(key: ResourceKey): string {
    return deterministicUuid(`kms-key:${key}`, 0);
  }

  public ref(key: ResourceKey): string | undefined {
    if (this.tables.has(key)) return this.tables.get(key)!.tableName;
    const local = this.names.ref(key);
    if (local !== undefined) return local;
    const resource = this.resources[key];
    if (resource === undefined) return undefined;
    if (resource.type === 'AWS::KMS::Key') return this.keyId(key);
    return resource.physicalName ?? generatedName(resource, 64);
  }

  public getAtt(key: ResourceKey, attribute: string): string | undefined {
    if (this.tables.has(key)) {
      if (attribute === 'Arn') return this.tableArn(key);
      if (attribute === 'StreamArn') return this.streamArn(key);
    }
    const local = this.names.getAtt(key, attribute);
    if (local !== undefined) return local;
    const resource = this.resources[key];
    if (resource === undefined) return undefined;
    // a topic's Ref is its ARN
    if (resource.type === 'AWS::SNS::Topic' && (attribute === 'Arn' || attribute === 'TopicArn')) return this.ref(key);
    if (resource.type === 'AWS::KMS::Key') return attribute === 'Arn' ? this.arn('kms', `key/${this.keyId(key)}`, false, key) : attribute === 'KeyId' ? this.keyId(key) : undefined;
    const name = resource.physicalName ?? generatedName(resource, 64);
    if (attribute !== 'Arn') return name;
    const format = ARN_FORMATS[resource.type];
    if (format !== undefined) return this.arn(format.service, format.arn(name), format.global, key);
    // a resource no request names: any well-formed ARN of its own serves
    const service = resource.type.split('::')[1]?.toLowerCase() ?? 'unknown';
    return this.arn(service, `${resource.type.split('::')[2]?.toLowerCase() ?? 'resource'}/${name}`, false, key);
  }
}
