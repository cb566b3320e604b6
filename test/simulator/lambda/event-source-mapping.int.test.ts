/**
 * The event source mapping end to end: a simulated queue, the real function runner and a handler file that reports
 * partial batch failures.
 */
import { afterAll, expect, test } from 'vitest';
import { FaultPlan, NO_FAULTS } from '../../../simulator/faults/fault-plan';
import { SimulatedEventSourceMapping } from '../../../simulator/lambda/event-source-mapping';
import type { SimulationObserver } from '../../../simulator/observation/observer';
import { frozenClock, makeQueue, queueModel } from '../aws/queue-test-kit';
import { assetDirectory, functionModel, runner } from './handler-kit';

const HANDLER = `
exports.handler = async (event) => {
  for (const record of event.Records) console.log(record.body + ' #' + record.attributes.ApproximateReceiveCount + ' from ' + record.eventSourceARN);
  return { batchItemFailures: event.Records.filter((record) => record.body.startsWith('fail')).map((record) => ({ itemIdentifier: record.messageId })) };
};
`;

const asset = assetDirectory({ 'index.js': HANDLER });
afterAll(() => asset.remove());

test('a round invokes the real function in concurrent environments and deletes all but the reported failures', async () => {
  const clock = frozenClock();
  const queue = makeQueue(queueModel('Orders'), { clock });
  for (const body of ['ok-1', 'fail-2', 'ok-3', 'ok-4']) queue.send({ body, origin: { via: 'send-message' } });
  const lines: string[] = [];
  const invocations: Parameters<NonNullable<SimulationObserver['onInvocation']>>[1][] = [];
  const observer: SimulationObserver = { onFunctionOutput: (_key, line) => lines.push(line), onInvocation: (_mapping, invocation) => invocations.push(invocation) };
  const run = runner(functionModel(asset.directory, { key: 'Stack/Consumer' }), { maxEnvironments: 2, observer, clock });
  try {
    const mapping = new SimulatedEventSourceMapping({
      model: { key: 'Stack/Mapping', stackName: 'Stack', logicalId: 'Mapping', queue: 'Stack/Orders', function: 'Stack/Consumer', batchSize: 10, reportBatchItemFailures: true, enabled: true },
      queue,
      runner: run,
      faults: new FaultPlan('seed', NO_FAULTS),
      region: 'us-east-1',
      observer,
    });
    expect(await mapping.runRound(2)).toBe(2);
    expect(run.stats()).toEqual({ invocations: 2, coldStarts: 2, preInitialized: 0, crashes: 0 });
    expect(invocations.map((invocation) => invocation.outcome.kind)).toEqual(['returned', 'returned']);
    expect(invocations.flatMap((invocation) => invocation.failedMessageIds)).toHaveLength(1);
    expect(lines.sort()).toEqual(['fail-2', 'ok-1', 'ok-3', 'ok-4'].map((body) => `${body} #1 from ${queue.address.arn}`));
    expect(queue.counts()).toEqual({ visible: 0, inFlight: 1, total: 1 });
    expect(queue.messages().map((message) => message.body)).toEqual(['fail-2']);
  } finally {
    await run.stop();
  }
});
