/**
 * Reads the {@link AccessModel} from the templates: roles with the identity policies attached to them, their
 * permissions boundaries and tags, the roles of functions and pipes, resource policies of queues, topics and tables,
 * key policies, the customer-managed keys that encrypt tables, queues, topics and buckets (SSE-KMS), bucket policies, and each table's partition keys. A reference the reader cannot follow (a role or key from outside the app, an AWS
 * managed policy) becomes a line of `notEvaluated`, never an allow.
 */
import type { AccessModel, EncryptionKey, ExecutionRole, KeyAccessModel, NamedResource, PermissionsBoundary, RoleAccessModel, TableKeys, TemplatePolicy } from '../access-model';
import type { ResourceKey } from '../flow-model';
import { describeExpression } from '../intrinsics';
import { RESOURCE_TYPES } from '../references';
import { kmsRuleOf } from './bucket';
import type { TemplateResource } from '../stack-template';
import { isPlainObject } from '../template-values';

/** The IAM and KMS resource types the reader looks at. */
export const ACCESS_RESOURCE_TYPES = {
  ROLE: 'AWS::IAM::Role',
  POLICY: 'AWS::IAM::Policy',
  MANAGED_POLICY: 'AWS::IAM::ManagedPolicy',
  QUEUE_POLICY: 'AWS::SQS::QueuePolicy',
  TOPIC_POLICY: 'AWS::SNS::TopicPolicy',
  BUCKET_POLICY: 'AWS::S3::BucketPolicy',
  KEY: 'AWS::KMS::Key',
} as const;

const TABLE_TYPES = [RESOURCE_TYPES.TABLE, RESOURCE_TYPES.GLOBAL_TABLE];

interface RoleDraft {
  readonly resource: TemplateResource;
  readonly policies: TemplatePolicy[];
  readonly unevaluatedManagedPolicies: string[];
  permissionsBoundary?: PermissionsBoundary;
  readonly tags: Record<string, unknown>;
}

/** The HASH attribute of a `KeySchema`, when it names one. */
function hashKeyOf(keySchema: unknown): string | undefined {
  const element = listOf(keySchema).find((candidate) => isPlainObject(candidate) && candidate.KeyType === 'HASH');
  return isPlainObject(element) && typeof element.AttributeName === 'string' ? element.AttributeName : undefined;
}

/** A table's partition key and its indexes', from its `KeySchema` and secondary indexes. */
function tableKeysOf(properties: Record<string, unknown>): TableKeys | undefined {
  const partitionKey = hashKeyOf(properties.KeySchema);
  if (partitionKey === undefined) return undefined;
  const indexPartitionKeys: Record<string, string> = {};
  for (const index of [...listOf(properties.GlobalSecondaryIndexes), ...listOf(properties.LocalSecondaryIndexes)]) {
    if (!isPlainObject(index) || typeof index.IndexName !== 'string') continue;
    const indexKey = hashKeyOf(index.KeySchema);
    if (indexKey !== undefined) indexPartitionKeys[index.IndexName] = indexKey;
  }
  return { partitionKey, indexPartitionKeys };
}

/** `Tags` (a list of `{Key, Value}`) as a record of the values as the template has them (a run resolves them). */
function tagsOf(value: unknown): Record<string, unknown> {
  const tags: Record<string, unknown> = {};
  for (const tag of listOf(value)) if (isPlainObject(tag) && typeof tag.Key === 'string' && tag.Value !== undefined) tags[tag.Key] = tag.Value;
  return tags;
}

function listOf(value: unknown): readonly unknown[] {
  return Array.isArray(value) ? value : value === undefined ? [] : [value];
}

function pathOf(resource: TemplateResource): string {
  return resource.constructPath ?? resource.key;
}

/**
 * The property that names a resource of a type IAM evaluation names itself (../../iam/iam-names.ts), when the
 * template sets it to a literal (the constructs give a cross-account consumer's role a RoleName, which the flow's
 * bucket and key policies pin with `aws:PrincipalArn`).
 */
const PHYSICAL_NAME_PROPERTIES: Readonly<Record<string, string>> = {
  'AWS::IAM::Role': 'RoleName',
  'AWS::IAM::ManagedPolicy': 'ManagedPolicyName',
  'AWS::Logs::LogGroup': 'LogGroupName',
  'AWS::Pipes::Pipe': 'Name',
};

/** Reads the access model of all `resources` (every resource of the selected templates). */
export function readAccessModel(resources: readonly TemplateResource[]): AccessModel {
  const notEvaluated: string[] = [];
  const roles = new Map<ResourceKey, RoleDraft>();
  const named: Record<ResourceKey, NamedResource> = {};
  for (const resource of resources) {
    const physicalName = PHYSICAL_NAME_PROPERTIES[resource.type] === undefined ? undefined : resource.properties[PHYSICAL_NAME_PROPERTIES[resource.type]!];
    named[resource.key] = { ...resource.modelled(), type: resource.type, ...(typeof physicalName === 'string' && physicalName !== '' ? { physicalName } : {}) };
    if (resource.type === ACCESS_RESOURCE_TYPES.ROLE) roles.set(resource.key, { resource, policies: [], unevaluatedManagedPolicies: [], tags: tagsOf(resource.properties.Tags) });
  }

  const roleOf = (resource: TemplateResource, value: unknown): TemplateResource | undefined =>
    resource.template.refTarget(value, [ACCESS_RESOURCE_TYPES.ROLE]) ?? resource.template.getAttTarget(value, [ACCESS_RESOURCE_TYPES.ROLE], ['Arn']);
  const managedPolicies = new Map<ResourceKey, TemplateResource>();
  for (const resource of resources) if (resource.type === ACCESS_RESOURCE_TYPES.MANAGED_POLICY) managedPolicies.set(resource.key, resource);

  const executionRoles: Record<ResourceKey, ExecutionRole> = {};
  const resourcePolicies: Record<ResourceKey, TemplatePolicy[]> = {};
  const keys: KeyAccessModel[] = [];
  const encryption: Record<ResourceKey, EncryptionKey> = {};
  const tableKeys: Record<ResourceKey, TableKeys> = {};
  const keyOf = (resource: TemplateResource, property: string, value: unknown): void => {
    if (value === undefined) return;
    const key = resource.template.getAttTarget(value, [ACCESS_RESOURCE_TYPES.KEY], ['Arn']) ?? resource.template.refTarget(value, [ACCESS_RESOURCE_TYPES.KEY]);
    if (key !== undefined) {
      encryption[resource.key] = { key: key.key };
      return;
    }
    const external = describeExpression(value);
    encryption[resource.key] = { external };
    notEvaluated.push(`${resource.label}: ${property} ${external} is not a key of the app; its key policy is not evaluated`);
  };
  const attachPolicy = (policy: TemplateResource, name: string): void => {
    const document = policy.properties.PolicyDocument;
    for (const value of listOf(policy.properties.Roles)) {
      const role = roleOf(policy, value);
      const draft = role === undefined ? undefined : roles.get(role.key);
      if (draft === undefined) {
        notEvaluated.push(`${policy.label}: role ${describeExpression(value)} is not a role of the app`);
        continue;
      }
      draft.policies.push({ name, stackName: policy.template.stackName, document });
    }
  };
  const addResourcePolicy = (policy: TemplateResource, property: string, types: readonly string[]): void => {
    for (const value of listOf(policy.properties[property])) {
      const target = policy.template.refTarget(value, types) ?? policy.template.getAttTarget(value, types, ['Arn']);
      if (target === undefined) {
        notEvaluated.push(`${policy.label}: ${property} ${describeExpression(value)} is not a resource of the app`);
        continue;
      }
      (resourcePolicies[target.key] ??= []).push({ name: pathOf(policy), stackName: policy.template.stackName, document: policy.properties.PolicyDocument });
    }
  };

  for (const resource of resources) {
    const properties = resource.properties;
    switch (resource.type) {
      case ACCESS_RESOURCE_TYPES.ROLE: {
        const draft = roles.get(resource.key)!;
        for (const inline of listOf(properties.Policies)) {
          if (!isPlainObject(inline)) continue;
          draft.policies.push({ name: `${pathOf(resource)}#${String(inline.PolicyName)}`, stackName: resource.template.stackName, document: inline.PolicyDocument });
        }
        for (const arn of listOf(properties.ManagedPolicyArns)) {
          const managed = resource.template.refTarget(arn, [ACCESS_RESOURCE_TYPES.MANAGED_POLICY]);
          if (managed !== undefined) {
            draft.policies.push({ name: pathOf(managed), stackName: managed.template.stackName, document: managed.properties.PolicyDocument });
            continue;
          }
          const shown = describeExpression(arn);
          draft.unevaluatedManagedPolicies.push(shown);
          notEvaluated.push(`${resource.label}: managed policy ${shown} is not a policy of the app; what it allows is not evaluated (requests only it would allow are reported as denied)`);
        }
        if (properties.PermissionsBoundary !== undefined) {
          const boundary = resource.template.refTarget(properties.PermissionsBoundary, [ACCESS_RESOURCE_TYPES.MANAGED_POLICY]);
          draft.permissionsBoundary =
            boundary !== undefined
              ? { policy: { name: pathOf(boundary), stackName: boundary.template.stackName, document: boundary.properties.PolicyDocument } }
              : { external: describeExpression(properties.PermissionsBoundary) };
        }
        break;
      }
      case ACCESS_RESOURCE_TYPES.POLICY:
        attachPolicy(resource, pathOf(resource));
        break;
      case ACCESS_RESOURCE_TYPES.MANAGED_POLICY:
        // attached through its own Roles; a role's ManagedPolicyArns is followed above
        attachPolicy(resource, pathOf(resource));
        break;
      case ACCESS_RESOURCE_TYPES.QUEUE_POLICY:
        addResourcePolicy(resource, 'Queues', [RESOURCE_TYPES.QUEUE]);
        break;
      case ACCESS_RESOURCE_TYPES.TOPIC_POLICY:
        addResourcePolicy(resource, 'Topics', [RESOURCE_TYPES.TOPIC]);
        break;
      case ACCESS_RESOURCE_TYPES.BUCKET_POLICY:
        // `Bucket` is the bucket's name: `Ref bucket`
        addResourcePolicy(resource, 'Bucket', [RESOURCE_TYPES.BUCKET]);
        break;
      case RESOURCE_TYPES.BUCKET: {
        const rule = kmsRuleOf(properties.BucketEncryption);
        // SSE-KMS without a key id is the AWS managed key aws/s3, whose policy allows the account's principals through S3
        if (rule?.KMSMasterKeyID !== undefined) keyOf(resource, 'BucketEncryption KMSMasterKeyID', rule.KMSMasterKeyID);
        break;
      }
      case ACCESS_RESOURCE_TYPES.KEY:
        keys.push({ ...resource.modelled(), keyPolicy: { name: `${pathOf(resource)} key policy`, stackName: resource.template.stackName, document: properties.KeyPolicy } });
        break;
      case RESOURCE_TYPES.FUNCTION:
      case RESOURCE_TYPES.PIPE: {
        const property = resource.type === RESOURCE_TYPES.FUNCTION ? 'Role' : 'RoleArn';
        const value = properties[property];
        const role = roleOf(resource, value);
        if (role !== undefined) executionRoles[resource.key] = { role: role.key };
        else {
          executionRoles[resource.key] = { external: describeExpression(value) };
          notEvaluated.push(`${resource.label}: its ${property} ${describeExpression(value)} is not a role of the app; its requests are not evaluated`);
        }
        break;
      }
      case RESOURCE_TYPES.QUEUE:
        keyOf(resource, 'KmsMasterKeyId', properties.KmsMasterKeyId === 'alias/aws/sqs' ? undefined : properties.KmsMasterKeyId);
        break;
      case RESOURCE_TYPES.TOPIC:
        keyOf(resource, 'KmsMasterKeyId', properties.KmsMasterKeyId === 'alias/aws/sns' ? undefined : properties.KmsMasterKeyId);
        break;
      default:
        if (TABLE_TYPES.includes(resource.type as (typeof TABLE_TYPES)[number])) {
          const keys = tableKeysOf(properties);
          if (keys !== undefined) tableKeys[resource.key] = keys;
          const sse = isPlainObject(properties.SSESpecification) ? properties.SSESpecification : {};
          if (sse.SSEEnabled === true && sse.KMSMasterKeyId !== undefined) keyOf(resource, 'SSESpecification.KMSMasterKeyId', sse.KMSMasterKeyId);
          const resourcePolicy = isPlainObject(properties.ResourcePolicy) ? properties.ResourcePolicy : undefined;
          if (resourcePolicy !== undefined) {
            (resourcePolicies[resource.key] ??= []).push({ name: `${pathOf(resource)} resource policy`, stackName: resource.template.stackName, document: resourcePolicy.PolicyDocument });
          }
        }
    }
  }

  const roleModels: RoleAccessModel[] = [...roles.values()].map(({ resource, policies, unevaluatedManagedPolicies, permissionsBoundary, tags }) => ({
    ...resource.modelled(),
    policies,
    unevaluatedManagedPolicies,
    ...(permissionsBoundary === undefined ? {} : { permissionsBoundary }),
    tags,
    ...(resource.properties.AssumeRolePolicyDocument === undefined
      ? {}
      : { trustPolicy: { name: `${pathOf(resource)} trust policy`, stackName: resource.template.stackName, document: resource.properties.AssumeRolePolicyDocument } }),
  }));
  return { roles: roleModels, executionRoles, resourcePolicies, keys, encryption, resources: named, notEvaluated, tableKeys };
}
