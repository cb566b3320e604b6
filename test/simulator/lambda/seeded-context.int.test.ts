/**
 * Under the run's seeded scheduler, what a handler reads of its context and of Lambda's variables is the seed's: its
 * `awsRequestId` and its log stream name (`context.logStreamName`, `AWS_LAMBDA_LOG_STREAM_NAME`). A handler that writes
 * its request id (a correlation id, an owner token, a key sent to an outside API) writes the same on a replay.
 */
import { afterAll, describe, expect, test } from 'vitest';
import { VirtualClock } from '../../../simulator/aws/clock';
import { SeededScheduler } from '../../../simulator/schedule/seeded-scheduler';
import { assetDirectory, functionModel, runner } from './handler-kit';

const IDS = `
exports.handler = async (event, context) => ({
  awsRequestId: context.awsRequestId,
  logStreamName: context.logStreamName,
  variable: process.env.AWS_LAMBDA_LOG_STREAM_NAME,
});
`;

interface Ids {
  readonly awsRequestId: string;
  readonly logStreamName: string;
  readonly variable: string;
}

const asset = assetDirectory({ 'index.js': IDS });
afterAll(() => asset.remove());

/** The ids three invocations read, in one run of `seed` (two environments: the third invocation runs in the second). */
async function idsOf(seed: string): Promise<Ids[]> {
  // one start for every run, as a replay gives (the log stream name begins with the day)
  const clock = VirtualClock.frozen(Date.parse('2026-11-30T00:00:00Z'));
  const run = runner(functionModel(asset.directory), { scheduler: new SeededScheduler(seed), maxEnvironments: 2, clock });
  try {
    const [first, second] = await Promise.all([run.invoke({}, 'first'), run.invoke({}, 'second')]);
    const third = await run.invoke({}, 'third');
    return [first, second, third].map((outcome) => {
      if (outcome.kind !== 'returned') throw new Error(`the invocation ${outcome.kind}`);
      return outcome.response as Ids;
    });
  } finally {
    await run.stop();
  }
}

describe("the context's ids under a seeded scheduler", () => {
  test('two runs of one seed give the same request ids and log stream names; each invocation its own request id', async () => {
    const once = await idsOf('context-ids');
    const again = await idsOf('context-ids');
    expect(again).toEqual(once);
    expect(new Set(once.map((ids) => ids.awsRequestId)).size).toBe(3);
    for (const ids of once) {
      expect(ids.awsRequestId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      expect(ids.logStreamName).toMatch(/^\d{4}\/\d{2}\/\d{2}\/\[\$LATEST\][0-9a-f]{32}$/);
      expect(ids.variable).toBe(ids.logStreamName);
    }
    // two environments, two log streams
    expect(new Set(once.map((ids) => ids.logStreamName)).size).toBe(2);
    // the seed decides them: another seed gives others
    const other = await idsOf('other-context-ids');
    expect(other.map((ids) => ids.awsRequestId)).not.toEqual(once.map((ids) => ids.awsRequestId));
    expect(new Set(other.map((ids) => ids.logStreamName))).not.toEqual(new Set(once.map((ids) => ids.logStreamName)));
  });
});
