/**
 * Issues 38/41, nu11 finding 1: the simulator reads an app whose OrderedSubscriber is in another stack than its flow,
 * registered with the flow while the flow has its dashboard (test/simulator/fixtures/ordered, context `split`): the
 * subscriber's FIFO queues have the literal names the flow gave them, and the run delivers every event to it, in order.
 */
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { EXIT_CODE } from '../../../simulator/cli/main';
import { simulateOrdered as simulate, synthesizeOrdered, type OrderedAssemblies } from './ordered-fixture';

let synthesized: OrderedAssemblies | undefined;
let split: string;

beforeAll(async () => {
  synthesized = await synthesizeOrdered([{ split: 'true' }]);
  [split] = synthesized.assemblies as [string];
});

afterAll(() => synthesized?.remove());

describe('simulate an app with an ordered subscriber in another stack than its flow, the dashboard on', () => {
  test('the assembly has the two stacks, the subscriber’s FIFO queues named, the dashboard in the flow’s stack', () => {
    const template = (stack: string) =>
      JSON.parse(readFileSync(path.join(split, `${stack}.template.json`), 'utf-8')) as { Resources: Record<string, { Type: string; Properties?: Record<string, unknown> }> };
    const queueNames = Object.values(template('OrderedSubscribers').Resources)
      .filter((r) => r.Type === 'AWS::SQS::Queue')
      .map((r) => r.Properties?.QueueName);
    expect(queueNames).toHaveLength(2);
    for (const name of queueNames) expect(name).toMatch(/^OrderedSubscribers-Shipping-Queue-[A-Za-z-]*[A-F0-9]{8}\.fifo$/);
    expect(Object.values(template('Ordered').Resources).filter((r) => r.Type === 'AWS::CloudWatch::Dashboard')).toHaveLength(1);
  });

  test('with faults, every event reaches the ordered subscriber once and in its aggregate order: OK', async () => {
    const { code, stdout } = await simulate(split, '--count', '6', '--seed', 'split');
    expect(stdout).toMatch(/^Shipping\s+ordered\s+6\s/m);
    expect(stdout).toContain('  Shipping: 6 event(s) of 3 aggregate(s) checked\n');
    expect(stdout).not.toContain('[aggregate-order]');
    expect(stdout).toContain('OK: every business change of the producer committed with its events;');
    expect(code).toBe(EXIT_CODE.OK);
  });
});
