/**
 * The relay's failure paths end to end, through the command line on the example app: a pipe whose every publish
 * attempt fails retries each record under its retry policy and dead-letters it, and the run accounts for every event
 * there (the example's relay dead-letter queue has an alarm); a copy of the example whose relay dead-letter queue no
 * alarm watches fails the run; SNS delivery failures are retried and counted. The copy is of the example's assembly,
 * synthesized once per test run, with the alarm's resource removed from its template (what removing the alarm's
 * construct from the app synthesizes), not a synthesized copy of the app (see assembly-variant.ts).
 */
import * as path from 'node:path';
import { afterEach, describe, expect, inject, test } from 'vitest';
import { EXIT_CODE, main } from '../../../simulator/cli/main';
import { exampleAssembly } from '../../support/example-assembly';
import { type AssemblyVariant, exampleAssemblyVariant, logicalIdAt, removeResource } from '../../support/assembly-variant';

const PROJECT = path.resolve(__dirname, '../../..');
const NO_OTHER_FAULTS = ['--duplicate-rate', '0', '--lost-response-rate', '0', '--throttle-rate', '0', '--crash-rate', '0'] as const;

const variants: AssemblyVariant[] = [];
afterEach(() => {
  for (const variant of variants.splice(0)) variant.remove();
});

async function simulate(...args: readonly string[]): Promise<{ code: number; stdout: string }> {
  let stdout = '';
  const code = await main(['simulate', '--count', '3', '--quiet', '--seed', 'relay', '--endpoint', inject('dynamoDbEndpoint'), ...NO_OTHER_FAULTS, ...args], {
    stdout: (text) => void (stdout += text),
    stderr: (text) => void (stdout += text),
    cwd: PROJECT,
  });
  return { code, stdout };
}

describe('simulate: the relay and SNS failure paths', () => {
  test('a pipe that never publishes dead-letters every event after its 10 retries; the watched dead-letter queue accounts for them, and nothing reached a subscriber: NOT PROVEN', async () => {
    // WHEN every publish attempt of the example's pipe fails (MaximumRetryAttempts 10, AUTOMATIC_BISECT)
    const { code, stdout } = await simulate('--assembly', await exampleAssembly(), '--scenario', 'example/simulation/scenario.ts', '--relay-failure-rate', '1', '--sns-delivery-failure-rate', '0');

    // THEN each committed event (the 3 OrderPlaced, and the fulfilment steps of the example's ordered path that
    // committed: its pipe fails too) was attempted 11 times and dead-lettered alone
    const [, committed] = /relay: (\d+) events committed to the outbox/.exec(stdout) ?? [];
    const events = Number(committed);
    expect(events).toBeGreaterThanOrEqual(3 + 1);
    expect(stdout).toContain(`${11 * events} publish attempt(s) failed and retried, ${events} event(s) given up and dead-lettered by the pipe (${events} message(s) of stream-batch metadata`);
    // nothing reached a subscriber: no check failed, and the verdict says where the events are, but nothing of
    // exactly-once was exercised, so it is NOT PROVEN (its own exit code: a CI step must not go green on it), naming
    // each subscriber not exercised and why
    expect(stdout).toMatch(new RegExp(`NOT PROVEN: .*every event reached every matching subscriber or is on a dead-letter queue an alarm watches \\(${events} given up by the relay, 0 by SNS\\)`));
    expect(stdout).not.toMatch(/^OK: /m);
    const notExercised = stdout.split('\n').filter((line) => /^ {2}\S+: received no event: the relay gave up on all \d+ committed event\(s\) its filter takes before they reached its topic$/.test(line));
    expect(notExercised.length).toBeGreaterThanOrEqual(2);
    expect(code).toBe(EXIT_CODE.NOT_PROVEN);
    expect(EXIT_CODE.NOT_PROVEN).not.toBe(EXIT_CODE.OK);
    expect(EXIT_CODE.NOT_PROVEN).not.toBe(EXIT_CODE.FAILURE);
  });

  test('the same failures with no alarm on the relay dead-letter queue fail the run: nobody would be told', async () => {
    // GIVEN the example without the alarm on its relay's dead-letter queue (the app would drop the construct with
    // `this.flow.relayAlarms.node.tryRemoveChild('DeadLetters')`); the dashboard's reference to it is left: the simulator
    // reads no dashboard
    const variant = await exampleAssemblyVariant((template) =>
      removeResource(template, 'Orders/RelayAlarms/DeadLetters/Resource', [logicalIdAt(template, 'Orders/Dashboard/Resource/Resource')]),
    );
    variants.push(variant);

    const { code, stdout } = await simulate(
      '--assembly', variant.directory,
      '--scenario', 'example/simulation/scenario.ts',
      '--relay-failure-rate', '1', '--sns-delivery-failure-rate', '0',
    );

    expect(code).toBe(EXIT_CODE.FAILURE);
    expect(stdout).toMatch(
      /\[unwatched-dead-letters\] 3 dead letter\(s\) of relay IdempotentEventFlowExample\/Orders\/Relay\/Resource are on queue IdempotentEventFlowExample\/Orders\/Relay\/DeadLetterQueue\/Resource, and no CloudWatch alarm in the templates watches it/,
    );
  });

  test('SNS delivery failures are retried under the SQS delivery policy, counted, and every event still arrives', async () => {
    const { code, stdout } = await simulate('--assembly', await exampleAssembly(), '--scenario', 'example/simulation/scenario.ts', '--relay-failure-rate', '0', '--sns-delivery-failure-rate', '0.5');
    const failed = Number(/sns: (\d+) delivery attempt\(s\) to queues failed and retried/.exec(stdout)?.[1]);
    expect(failed).toBeGreaterThan(0);
    expect(stdout).not.toContain('subscription dead-letter queues');
    expect(stdout).toMatch(/OK: .*every event reached every matching subscriber;/);
    expect(code).toBe(EXIT_CODE.OK);
  });
});
