/**
 * The topic an example stack's alarms notify, one per account of the example (alarm actions can not cross accounts or
 * Regions): encrypted with a key CloudWatch may use, TLS-only.
 */
import { ArnFormat, Stack } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as sns from 'aws-cdk-lib/aws-sns';
import type { Construct } from 'constructs';

/** The topic the flow's alarms notify: encrypted with a key CloudWatch may use, TLS-only. */
export function opsTopic(scope: Construct): sns.Topic {
  const key = new kms.Key(scope, 'OpsAlarmsKey', {
    enableKeyRotation: true,
    description: 'Encrypts the ops alarm topic of the idempotent-event-flow example',
  });
  // CloudWatch alarms publish to an encrypted topic only if the key lets CloudWatch use it: only for alarms of this
  // account and region (confused-deputy guard).
  const stack = Stack.of(scope);
  key.addToResourcePolicy(
    new iam.PolicyStatement({
      sid: 'AllowCloudWatchAlarmsOfThisAccountToPublish',
      principals: [new iam.ServicePrincipal('cloudwatch.amazonaws.com')],
      actions: ['kms:Decrypt', 'kms:GenerateDataKey*'],
      resources: ['*'],
      conditions: {
        StringEquals: { 'aws:SourceAccount': stack.account },
        ArnLike: { 'aws:SourceArn': stack.formatArn({ service: 'cloudwatch', resource: 'alarm', resourceName: '*', arnFormat: ArnFormat.COLON_RESOURCE_NAME }) },
      },
    }),
  );
  return new sns.Topic(scope, 'OpsAlarms', { masterKey: key, enforceSSL: true });
}
