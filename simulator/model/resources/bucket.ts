/** `AWS::S3::Bucket`: where the claim-check of an event too large to travel inline keeps the event's data. */
import type { BucketModel } from '../bucket-model';
import type { TemplateResource } from '../stack-template';
import { isPlainObject } from '../template-values';

function listOf(value: unknown): readonly unknown[] {
  return Array.isArray(value) ? value : value === undefined ? [] : [value];
}

/**
 * Reads a bucket: its `BucketName` when the template sets one, whether `VersioningConfiguration.Status` is `Enabled`,
 * and whether its default encryption is SSE-KMS with `BucketKeyEnabled` (S3 then asks KMS with the bucket's ARN as
 * encryption context instead of the object's). The key itself is read with the other encryption keys
 * (resources/access.ts), so that a key from outside the app is reported there as not evaluated.
 */
export function readBucket(resource: TemplateResource): BucketModel {
  const properties = resource.properties;
  const bucketName = properties.BucketName;
  const versioning = isPlainObject(properties.VersioningConfiguration) ? properties.VersioningConfiguration.Status : undefined;
  const rule = kmsRuleOf(properties.BucketEncryption);
  return {
    ...resource.modelled(),
    ...(typeof bucketName === 'string' ? { bucketName } : {}),
    versioned: versioning === 'Enabled',
    ...(rule?.BucketKeyEnabled === true ? { bucketKeyEnabled: true } : {}),
  };
}

/** The `ServerSideEncryptionConfiguration` rule of `BucketEncryption` whose default is `aws:kms` (or `aws:kms:dsse`). */
export function kmsRuleOf(bucketEncryption: unknown): { readonly KMSMasterKeyID?: unknown; readonly BucketKeyEnabled?: unknown } | undefined {
  if (!isPlainObject(bucketEncryption)) return undefined;
  for (const rule of listOf(bucketEncryption.ServerSideEncryptionConfiguration)) {
    if (!isPlainObject(rule) || !isPlainObject(rule.ServerSideEncryptionByDefault)) continue;
    const byDefault = rule.ServerSideEncryptionByDefault;
    if (byDefault.SSEAlgorithm === 'aws:kms' || byDefault.SSEAlgorithm === 'aws:kms:dsse') {
      return { ...(byDefault.KMSMasterKeyID === undefined ? {} : { KMSMasterKeyID: byDefault.KMSMasterKeyID }), ...(rule.BucketKeyEnabled === undefined ? {} : { BucketKeyEnabled: rule.BucketKeyEnabled }) };
    }
  }
  return undefined;
}
