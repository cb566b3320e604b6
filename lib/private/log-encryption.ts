import { Annotations, ArnFormat, Stack } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
import type { IConstruct } from 'constructs';

/** The key-policy statement id the library adds to a key that encrypts its log groups. */
export const LOGS_KEY_POLICY_SID = 'AllowCloudWatchLogsToEncryptLogGroupsOfThisAccount';

const keysWithStatement = new WeakSet<kms.IKey>();

/**
 * Lets CloudWatch Logs use `key` for log groups of `scope`'s account and region: the statement the CloudWatch Logs
 * user guide ("Encrypt log data in CloudWatch Logs using AWS KMS") asks for, with the condition on the encryption
 * context `kms:EncryptionContext:aws:logs:arn` = `arn:<partition>:logs:<region>:<account>:log-group:*`, so the key
 * serves log groups of this account and region only. Added once per key. The library's log groups have generated
 * names (a name in the condition would make the key and the log group depend on each other), hence the wildcard
 * over log group names. An imported key's policy can not be changed: a warning names the statement to add.
 */
export function allowLogsToUseKey(scope: IConstruct, key: kms.IKey): void {
  if (keysWithStatement.has(key)) return;
  const stack = Stack.of(scope);
  const logGroups = stack.formatArn({ service: 'logs', resource: 'log-group', resourceName: '*', arnFormat: ArnFormat.COLON_RESOURCE_NAME });
  const statement = new iam.PolicyStatement({
    sid: LOGS_KEY_POLICY_SID,
    principals: [new iam.ServicePrincipal(`logs.${stack.region}.amazonaws.com`)],
    actions: ['kms:Encrypt*', 'kms:Decrypt*', 'kms:ReEncrypt*', 'kms:GenerateDataKey*', 'kms:Describe*'],
    resources: ['*'],
    conditions: { ArnLike: { 'kms:EncryptionContext:aws:logs:arn': logGroups } },
  });
  if (key.addToResourcePolicy(statement, true).statementAdded) {
    keysWithStatement.add(key);
  } else {
    Annotations.of(scope).addWarningV2(
      'idempotent-event-flow:logKeyPolicy',
      `The key policy of the imported log encryption key can not be changed here. Allow principal logs.<region>.amazonaws.com ` +
        'kms:Encrypt*, kms:Decrypt*, kms:ReEncrypt*, kms:GenerateDataKey* and kms:Describe* with condition ' +
        `ArnLike kms:EncryptionContext:aws:logs:arn = ${logGroups}, or the log groups can not be created.`,
    );
  }
}
