/**
 * Who may do what, as the synthesized templates say it: the execution roles of the functions and pipes with their
 * identity policies, permissions boundaries and tags, the resource policies of queues, topics and tables, the key policies of KMS keys, and which
 * customer-managed key encrypts which resource. Policy documents are kept as the template has them (intrinsics and
 * cross-stack values included): a run resolves them to ARNs once it knows the local names (simulator/iam/).
 */
import type { ModelledResource, ResourceKey } from './modelled-resource';

/** A policy document of the template, not yet resolved. */
export interface TemplatePolicy {
  /** How reports name it: the construct path of the policy resource, or `<role path>#<PolicyName>` for an inline policy. */
  readonly name: string;
  /** The stack whose template holds the document (its intrinsics resolve there). */
  readonly stackName: string;
  /** `PolicyDocument` / `KeyPolicy`, as the template has it. */
  readonly document: unknown;
}

/** `AWS::IAM::Role`, with every identity policy of the templates attached to it. */
export interface RoleAccessModel extends ModelledResource {
  /** Inline `Policies`, and every `AWS::IAM::Policy` / `AWS::IAM::ManagedPolicy` of the templates whose `Roles` name it. */
  readonly policies: readonly TemplatePolicy[];
  /** `ManagedPolicyArns` that are not a `ManagedPolicy` of the templates (AWS managed or from outside the app): not evaluated. */
  readonly unevaluatedManagedPolicies: readonly string[];
  /** `PermissionsBoundary`: a `ManagedPolicy` of the templates, or an ARN from outside the app. @default no boundary */
  readonly permissionsBoundary?: PermissionsBoundary;
  /** `Tags`, by key, each value as the template has it (resolved by a run): the request context's `aws:PrincipalTag/<key>`. @default no tags */
  readonly tags?: Readonly<Record<string, unknown>>;
  /** `AssumeRolePolicyDocument`: who may assume the role (`sts:AssumeRole`, answered by a served run's STS). @default none */
  readonly trustPolicy?: TemplatePolicy;
}

/** A role's permissions boundary: a managed policy of the templates, or one from outside the app (not evaluated). */
export type PermissionsBoundary = { readonly policy: TemplatePolicy } | { readonly external: string };

/** The key attributes of a table that DynamoDB's `dynamodb:LeadingKeys` reads. */
export interface TableKeys {
  /** The table's partition (HASH) key attribute. */
  readonly partitionKey: string;
  /** Each global or local secondary index's partition key attribute, by index name. */
  readonly indexPartitionKeys: Readonly<Record<string, string>>;
}

/** The role a function (`Role`) or a pipe (`RoleArn`) runs as: one of the templates, or one from outside the app. */
export type ExecutionRole = { readonly role: ResourceKey } | { readonly external: string };

/** `AWS::KMS::Key`. */
export interface KeyAccessModel extends ModelledResource {
  readonly keyPolicy: TemplatePolicy;
}

/** The key that encrypts a table, queue or topic: a key of the templates, or one from outside the app (or AWS managed). */
export type EncryptionKey = { readonly key: ResourceKey } | { readonly external: string };

/** A template resource any policy may name, with what its ARN is made of. */
export interface NamedResource extends ModelledResource {
  readonly type: string;
  /**
   * The name the template gives the resource (a role's `RoleName`, a managed policy's `ManagedPolicyName`, a log
   * group's `LogGroupName`, a pipe's `Name`), when it is a literal: AWS names the resource so, and a policy may name
   * it (a bucket policy pinning `aws:PrincipalArn` to a role of another account). @default a generated name
   */
  readonly physicalName?: string;
}

/** Everything IAM evaluation needs from the templates. */
export interface AccessModel {
  readonly roles: readonly RoleAccessModel[];
  /** The execution role of each function and pipe, by the function's or pipe's key. */
  readonly executionRoles: Readonly<Record<ResourceKey, ExecutionRole>>;
  /** Resource policies by the queue, topic, table or bucket they are attached to (`AWS::SQS::QueuePolicy`, `AWS::SNS::TopicPolicy`, `ResourcePolicy`, `AWS::S3::BucketPolicy`). */
  readonly resourcePolicies: Readonly<Record<ResourceKey, readonly TemplatePolicy[]>>;
  readonly keys: readonly KeyAccessModel[];
  /** The customer-managed (or external) key of each table (`SSESpecification.KMSMasterKeyId`), queue and topic (`KmsMasterKeyId`), and bucket (`BucketEncryption`'s `KMSMasterKeyID`). */
  readonly encryption: Readonly<Record<ResourceKey, EncryptionKey>>;
  /** Every resource of the selected templates, so that a policy's `Ref` or `Fn::GetAtt` of any of them resolves. */
  readonly resources: Readonly<Record<ResourceKey, NamedResource>>;
  /** The key attributes of each table, by the table's key. @default none known (DynamoDB's key-based context keys are then not filled) */
  readonly tableKeys?: Readonly<Record<ResourceKey, TableKeys>>;
  /** What the templates hold that IAM evaluation cannot judge (an imported role, an AWS managed policy, ...), one line each. */
  readonly notEvaluated: readonly string[];
}
