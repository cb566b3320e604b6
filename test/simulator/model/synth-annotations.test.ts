/** The synth's warnings and errors, read from the cloud assembly's manifest (each stack artifact's metadata). */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { readSynthAnnotations } from '../../../simulator/model/synth-annotations';
import { writeAssembly } from './assembly-fixture';

const directories: string[] = [];
afterEach(() => {
  for (const directory of directories.splice(0)) fs.rmSync(directory, { recursive: true, force: true });
});

/** An assembly of two stacks, with `metadata` added to their artifacts. */
function assemblyWith(metadata: Record<string, Record<string, unknown>>): string {
  const directory = writeAssembly({ Orders: { template: { Resources: {} } }, Billing: { template: { Resources: {} } } });
  directories.push(directory);
  const manifestFile = path.join(directory, 'manifest.json');
  const manifest = JSON.parse(fs.readFileSync(manifestFile, 'utf8')) as { artifacts: Record<string, Record<string, unknown>> };
  for (const [artifactId, entries] of Object.entries(metadata)) manifest.artifacts[artifactId]!.metadata = entries;
  fs.writeFileSync(manifestFile, JSON.stringify(manifest));
  return directory;
}

describe('readSynthAnnotations', () => {
  test('lists the warnings and errors of the selected stacks with their construct paths, not the infos', () => {
    const directory = assemblyWith({
      Orders: {
        '/Orders/Consumer/Resource': [
          { type: 'aws:cdk:warning', data: "Function timeout is larger than the queue's visibility timeout [ack: @aws-cdk/aws-lambda-event-sources:visibility]" },
          { type: 'aws:cdk:info', data: 'something informative' },
          { type: 'aws:cdk:logicalId', data: 'ConsumerResource' },
        ],
        '/Orders/Topic': [{ type: 'aws:cdk:error', data: 'the topic is broken' }],
      },
      Billing: { '/Billing/Queue': [{ type: 'aws:cdk:warning', data: 'a warning of another stack' }] },
    });

    expect(readSynthAnnotations(directory, ['Orders'])).toEqual([
      { level: 'warning', path: '/Orders/Consumer/Resource', message: "Function timeout is larger than the queue's visibility timeout [ack: @aws-cdk/aws-lambda-event-sources:visibility]" },
      { level: 'error', path: '/Orders/Topic', message: 'the topic is broken' },
    ]);
    expect(readSynthAnnotations(directory, ['Orders', 'Billing'])).toHaveLength(3);
  });

  test("adds the findings of the synth's validation plugins (validation-report.json) on the selected stacks", () => {
    const directory = assemblyWith({});
    const violation = (ruleName: string, severity: string, constructPath: string) => ({
      ruleName,
      description: `rule ${ruleName}`,
      severity,
      violatingConstructs: [{ constructPath, constructFqn: 'aws-cdk-lib.aws_lambda.CfnFunction' }],
    });
    fs.writeFileSync(
      path.join(directory, 'validation-report.json'),
      JSON.stringify({
        title: 'Validation Report',
        pluginReports: [{ pluginName: 'CloudFormation Validate', violations: [violation('W3005', 'warning', 'Orders/Consumer/Resource'), violation('E1001', 'error', 'Billing/Queue/Resource')] }],
      }),
    );

    expect(readSynthAnnotations(directory, ['Orders'])).toEqual([{ level: 'warning', path: '/Orders/Consumer/Resource', message: 'CloudFormation Validate W3005: rule W3005' }]);
    expect(readSynthAnnotations(directory, ['Billing'])).toEqual([{ level: 'error', path: '/Billing/Queue/Resource', message: 'CloudFormation Validate E1001: rule E1001' }]);
  });
});
