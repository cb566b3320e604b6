import { Annotations, App, CfnParameter, Duration, type IPolicyValidationPlugin, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as sns from 'aws-cdk-lib/aws-sns';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import * as cxapi from 'aws-cdk-lib/cx-api';
import { describe, expect, test } from 'vitest';
import { assertCompliant, checkCompliance, complianceApp, formatComplianceResult } from '../support/compliance';

// Throwaway stacks that exercise the harness itself; the library's own constructs get their
// compliance tests next to their construct tests.

/** A queue with neither a dead-letter queue nor an SSL-only policy. */
function bareQueueStack(app: App): { stack: Stack; queue: sqs.Queue } {
  const stack = new Stack(app, 'BareQueue');
  const queue = new sqs.Queue(stack, 'Queue');
  return { stack, queue };
}

function ruleIdsAt(findings: ReadonlyArray<{ ruleId: string; path: string }>, path: string): string[] {
  return findings.filter((f) => f.path === path).map((f) => f.ruleId).sort();
}

describe('complianceApp', () => {
  test('applies the cdk.json context, including strict CloudFormation validation', () => {
    const app = complianceApp();

    expect(app.node.tryGetContext(cxapi.VALIDATE_AGAINST_DEFAULT_RULES)).toBe(true);
    expect(app.node.tryGetContext(cxapi.STRICT_CFN_VALIDATE_ERRORS)).toBe(true);
  });

  test('skips asset bundling by default', () => {
    const stack = new Stack(complianceApp(), 'Stack');

    expect(stack.bundlingRequired).toBe(false);
  });

  test('bundles assets when asked to', () => {
    const stack = new Stack(complianceApp({ bundling: true }), 'Stack');

    expect(stack.bundlingRequired).toBe(true);
  });
});

describe('checkCompliance: cdk-nag findings', () => {
  test('reports AwsSolutions and Serverless findings for a queue without DLQ or SSL policy', () => {
    const app = complianceApp();
    bareQueueStack(app);

    const result = checkCompliance(app);

    expect(ruleIdsAt(result.unansweredFindings, 'BareQueue/Queue/Resource')).toEqual([
      'AwsSolutions-SQS3',
      'AwsSolutions-SQS4',
      'Serverless-SQSRedrivePolicy',
    ]);
    expect(result.unansweredFindings).toContainEqual({
      source: 'AwsSolutions',
      ruleId: 'AwsSolutions-SQS4',
      path: 'BareQueue/Queue/Resource',
      severity: 'error',
      message: 'The SQS queue does not require requests to use SSL.',
    });
    expect(result.cfnValidationErrors).toEqual([]);
    expect(result.acknowledged).toEqual([]);
  });

  test('moves a finding acknowledged with its cdk-nag id to acknowledged, with the reason', () => {
    const app = complianceApp();
    const { queue } = bareQueueStack(app);
    Validations.of(queue).acknowledge({ id: 'AwsSolutions-SQS3', reason: 'This queue is itself a dead-letter queue.' });

    const result = checkCompliance(app);

    expect(ruleIdsAt(result.unansweredFindings, 'BareQueue/Queue/Resource')).toEqual([
      'AwsSolutions-SQS4',
      'Serverless-SQSRedrivePolicy',
    ]);
    expect(result.acknowledged).toEqual([
      {
        source: 'AwsSolutions',
        ruleId: 'AwsSolutions-SQS3',
        path: 'BareQueue/Queue/Resource',
        acknowledgedAt: 'BareQueue/Queue',
        reason: 'This queue is itself a dead-letter queue.',
      },
    ]);
  });

  test('accepts the namespaced id that cdk synth suggests (AwsSolutions::AwsSolutions-SQS3)', () => {
    const app = complianceApp();
    const { queue } = bareQueueStack(app);
    Validations.of(queue).acknowledge({ id: 'AwsSolutions::AwsSolutions-SQS3', reason: 'Terminal dead-letter queue.' });

    const result = checkCompliance(app);

    expect(ruleIdsAt(result.unansweredFindings, 'BareQueue/Queue/Resource')).not.toContain('AwsSolutions-SQS3');
    expect(result.acknowledged).toEqual([
      expect.objectContaining({ ruleId: 'AwsSolutions-SQS3', path: 'BareQueue/Queue/Resource', reason: 'Terminal dead-letter queue.' }),
    ]);
  });

  test('an acknowledgement on the stack covers the resources in it', () => {
    const app = complianceApp();
    const { stack } = bareQueueStack(app);
    Validations.of(stack).acknowledge({ id: 'Serverless-SQSRedrivePolicy', reason: 'Throwaway test stack.' });

    const result = checkCompliance(app);

    expect(ruleIdsAt(result.unansweredFindings, 'BareQueue/Queue/Resource')).not.toContain('Serverless-SQSRedrivePolicy');
    expect(result.acknowledged).toEqual([
      expect.objectContaining({ ruleId: 'Serverless-SQSRedrivePolicy', acknowledgedAt: 'BareQueue' }),
    ]);
  });

  test('acknowledges one finding of a multi-finding rule with the [Action::...] suffix, not the others', () => {
    const app = complianceApp();
    const stack = new Stack(app, 'Wildcards');
    const role = new iam.Role(stack, 'Role', { assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com') });
    role.addToPolicy(new iam.PolicyStatement({ actions: ['s3:*'], resources: ['*'] }));
    Validations.of(role).acknowledge({ id: 'AwsSolutions-IAM5[Action::s3:*]', reason: 'Harness test of the suffix form.' });

    const result = checkCompliance(app);

    const policy = 'Wildcards/Role/DefaultPolicy/Resource';
    expect(ruleIdsAt(result.unansweredFindings, policy)).toContain('AwsSolutions-IAM5[Resource::*]');
    expect(ruleIdsAt(result.unansweredFindings, policy)).not.toContain('AwsSolutions-IAM5[Action::s3:*]');
    expect(result.acknowledged).toContainEqual(
      expect.objectContaining({ ruleId: 'AwsSolutions-IAM5[Action::s3:*]', path: policy, acknowledgedAt: 'Wildcards/Role' }),
    );
  });

  test('reports construct warnings too, because strict mode fails synthesis on them', () => {
    const app = complianceApp();
    const stack = new Stack(app, 'Warned');
    const key = new kms.Key(stack, 'Key', { enableKeyRotation: true });
    Annotations.of(key).addWarningV2('idempotent-event-flow:example', 'An example construct warning.');

    const result = checkCompliance(app);

    expect(result.unansweredFindings).toEqual([
      {
        source: 'Construct Annotations',
        ruleId: 'Annotation::idempotent-event-flow:example',
        path: 'Warned/Key',
        severity: 'warning',
        message: 'An example construct warning.',
      },
    ]);
  });

  test('lists acknowledgements whose reason is empty or blank', () => {
    const app = complianceApp();
    const { queue } = bareQueueStack(app);
    Validations.of(queue).acknowledge({ id: 'AwsSolutions-SQS3', reason: '' });
    Validations.of(queue).acknowledge({ id: 'AwsSolutions-SQS4', reason: '   ' });
    Validations.of(queue).acknowledge({ id: 'Serverless-SQSRedrivePolicy', reason: 'Has a reason.' });

    const result = checkCompliance(app);

    expect(result.acknowledgementsWithoutReason.map((a) => [a.id, a.declaredAt])).toEqual([
      ['Annotation::AwsSolutions-SQS3', 'BareQueue/Queue'],
      ['Annotation::AwsSolutions-SQS4', 'BareQueue/Queue'],
    ]);
    expect(() => assertCompliant(result)).toThrow(/2 acknowledgement\(s\) without a reason/);
  });
});

describe('checkCompliance: CloudFormation validation', () => {
  test('reports an out-of-range property value as an error', () => {
    const app = complianceApp();
    const stack = new Stack(app, 'BadValue');
    new sqs.CfnQueue(stack, 'Queue', { messageRetentionPeriod: 10 });

    const result = checkCompliance(app);

    expect(result.cfnValidationErrors).toEqual([
      {
        ruleId: 'F3034',
        path: 'BadValue/Queue',
        logicalId: 'Queue',
        propertyPath: 'Properties.MessageRetentionPeriod',
        severity: 'error',
        message: 'MessageRetentionPeriod: 10 is less than the minimum of 60',
      },
    ]);
  });

  test('reports a misspelled property override as an error', () => {
    const app = complianceApp();
    const stack = new Stack(app, 'Misspelled');
    const queue = new sqs.Queue(stack, 'Queue');
    (queue.node.defaultChild as sqs.CfnQueue).addPropertyOverride('VisibilityTimout', 30);

    const result = checkCompliance(app);

    expect(result.cfnValidationErrors).toEqual([
      expect.objectContaining({
        ruleId: 'F3002',
        path: 'Misspelled/Queue/Resource',
        propertyPath: 'Properties.VisibilityTimout',
        severity: 'error',
        message: expect.stringMatching(/'VisibilityTimout' was unexpected/),
      }),
    ]);
  });

  test('reports best-practice warnings too, because strict mode fails synthesis on them', () => {
    const app = complianceApp();
    const stack = new Stack(app, 'UnusedParameter');
    new CfnParameter(stack, 'Unused', { type: 'String', default: 'x' });
    new sqs.CfnQueue(stack, 'Queue');

    const result = checkCompliance(app);

    expect(result.cfnValidationErrors).toEqual([
      expect.objectContaining({ ruleId: 'W2001', path: 'UnusedParameter', severity: 'warning' }),
    ]);
  });

  test('acknowledges a validator finding with CloudFormation-Validate::<ruleId>', () => {
    const app = complianceApp();
    const stack = new Stack(app, 'BadValue');
    const queue = new sqs.CfnQueue(stack, 'Queue', { messageRetentionPeriod: 10 });
    Validations.of(queue).acknowledge({ id: 'CloudFormation-Validate::F3034', reason: 'Harness test.' });

    const result = checkCompliance(app);

    expect(result.cfnValidationErrors).toEqual([]);
    expect(result.acknowledged).toContainEqual({
      source: 'CloudFormation Validate',
      ruleId: 'F3034',
      path: 'BadValue/Queue',
      acknowledgedAt: 'BadValue/Queue',
      reason: 'Harness test.',
    });
  });
});

describe('checkCompliance: clean and broken runs', () => {
  test('reports nothing for a compliant stack', () => {
    const app = complianceApp();
    const stack = new Stack(app, 'Clean');
    const key = new kms.Key(stack, 'Key', { enableKeyRotation: true, removalPolicy: RemovalPolicy.DESTROY });
    new sns.Topic(stack, 'Topic', { enforceSSL: true, masterKey: key });
    new dynamodb.TableV2(stack, 'Table', {
      partitionKey: { name: 'pk', type: dynamodb.AttributeType.STRING },
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      timeToLiveAttribute: 'expiresAtEpochSeconds',
    });
    const deadLetterQueue = new sqs.Queue(stack, 'DeadLetterQueue', { enforceSSL: true, retentionPeriod: Duration.days(14) });
    new sqs.Queue(stack, 'Queue', { enforceSSL: true, deadLetterQueue: { queue: deadLetterQueue, maxReceiveCount: 5 } });
    // Serverless-SQSRedrivePolicy also fires on a dead-letter queue; a terminal DLQ has nowhere to redrive to.
    Validations.of(deadLetterQueue).acknowledge({ id: 'Serverless-SQSRedrivePolicy', reason: 'Terminal dead-letter queue.' });

    const result = checkCompliance(app);

    expect(result.unansweredFindings, formatComplianceResult(result)).toEqual([]);
    expect(result.cfnValidationErrors, formatComplianceResult(result)).toEqual([]);
    expect(result.acknowledgementsWithoutReason).toEqual([]);
    expect(result.acknowledged.map((a) => a.path)).toEqual(['Clean/DeadLetterQueue/Resource']);
    expect(() => assertCompliant(result)).not.toThrow();
  });

  test('assertCompliant lists every problem in its message', () => {
    const app = complianceApp();
    bareQueueStack(app);
    new sqs.CfnQueue(app.node.findChild('BareQueue'), 'Invalid', { messageRetentionPeriod: 10 });

    const result = checkCompliance(app);

    expect(() => assertCompliant(result)).toThrow(
      /unanswered finding\(s\):[\s\S]*AwsSolutions-SQS4 \(error\) at BareQueue\/Queue\/Resource[\s\S]*F3034 \(error\) at BareQueue\/Invalid \[Invalid Properties\.MessageRetentionPeriod\]/,
    );
  });

  test('fails if a validation plugin crashes, instead of reporting a clean result', () => {
    const app = complianceApp();
    new sqs.CfnQueue(new Stack(app, 'Stack'), 'Queue');
    const broken: IPolicyValidationPlugin = {
      name: 'Broken',
      validate: () => {
        throw new Error('boom');
      },
    };
    Validations.of(app).addPlugins(broken);

    expect(() => checkCompliance(app)).toThrow(/Validation plugin 'Broken' did not run: .*boom/);
  });

  test('fails if the App was not made by complianceApp', () => {
    expect(() => checkCompliance(new App())).toThrow(/needs an App created by complianceApp/);
  });
});
