import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, Stack, Validations } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as kms from 'aws-cdk-lib/aws-kms';
import { AwsSolutionsChecks, ServerlessChecks } from 'cdk-nag';
import { describe, expect, test } from 'vitest';
import { OutboxRelay, OutboxTable } from '../../lib/outbox';
import { EventTopic } from '../../lib/topic';

interface Violation {
  readonly ruleName: string;
  readonly violatingConstructs: Array<{ readonly constructPath: string }>;
}

/**
 * Synthesizes what `build` adds to a stack under the cdk-nag AwsSolutions and Serverless packs and returns every
 * unacknowledged finding as `<rule> at <construct path>`.
 */
function nagFindings(build: (stack: Stack) => void): string[] {
  const outdir = mkdtempSync(join(tmpdir(), 'outbox-nag-'));
  try {
    const app = new App({ outdir });
    build(new Stack(app, 'Stack'));
    Validations.of(app).addPlugins(new AwsSolutionsChecks(app), new ServerlessChecks(app));
    try {
      app.synth();
      return [];
    } catch {
      const report = JSON.parse(readFileSync(join(outdir, 'validation-report.json'), 'utf8')) as {
        pluginReports: Array<{ violations: Violation[] }>;
      };
      return report.pluginReports.flatMap((plugin) =>
        plugin.violations.flatMap((v) => v.violatingConstructs.map((c) => `${v.ruleName} at ${c.constructPath}`)),
      );
    }
  } finally {
    rmSync(outdir, { recursive: true, force: true });
  }
}

describe('cdk-nag AwsSolutions and Serverless packs', () => {
  test('find nothing on an OutboxTable', () => {
    expect(nagFindings((stack) => new OutboxTable(stack, 'Outbox'))).toEqual([]);
  });

  test('find nothing on an EventTopic', () => {
    expect(nagFindings((stack) => new EventTopic(stack, 'Events'))).toEqual([]);
  });

  test('find nothing on an OutboxRelay with its defaults', () => {
    const findings = nagFindings((stack) => {
      const events = new EventTopic(stack, 'Events');
      new OutboxRelay(stack, 'Relay', { outboxTable: new OutboxTable(stack, 'Outbox'), topic: events.topic });
    });
    expect(findings).toEqual([]);
  });

  test('find nothing on an OutboxRelay with customer-managed keys everywhere', () => {
    const findings = nagFindings((stack) => {
      const key = new kms.Key(stack, 'Key', { enableKeyRotation: true });
      const events = new EventTopic(stack, 'Events', { encryptionKey: key });
      const outboxTable = new OutboxTable(stack, 'Outbox', { encryptionKey: key });
      new OutboxRelay(stack, 'Relay', { outboxTable, topic: events.topic, deadLetterQueueEncryptionKey: key });
    });
    expect(findings).toEqual([]);
  });

  test('find nothing on an OutboxRelay over an existing single-table design', () => {
    const findings = nagFindings((stack) => {
      const table = new dynamodb.Table(stack, 'Business', {
        partitionKey: { name: 'PK', type: dynamodb.AttributeType.STRING },
        sortKey: { name: 'SK', type: dynamodb.AttributeType.STRING },
        stream: dynamodb.StreamViewType.NEW_AND_OLD_IMAGES,
        pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      });
      const outboxTable = OutboxTable.fromTableAttributes(stack, 'Outbox', { table, partitionKeyName: 'PK', sortKeyName: 'SK' });
      new OutboxRelay(stack, 'Relay', { outboxTable, topic: new EventTopic(stack, 'Events').topic });
    });
    expect(findings).toEqual([]);
  });

  test('still report findings on other resources (the check is live)', () => {
    const findings = nagFindings((stack) => {
      new dynamodb.Table(stack, 'NoPitr', { partitionKey: { name: 'PK', type: dynamodb.AttributeType.STRING } });
    });
    expect(findings).toContain('AwsSolutions-DDB3 at Stack/NoPitr/Resource');
  });
});
