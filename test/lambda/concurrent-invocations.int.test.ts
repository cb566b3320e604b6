/**
 * Lambda Managed Instances run several invocations at once in one execution environment: one handler, called for two
 * batches concurrently in one process, must keep each batch's response, metrics and log lines to itself (issue 10,
 * item 18). Against DynamoDB Local.
 */
import { afterAll, beforeAll, expect, test } from 'vitest';
import { createTransactionalConsumer, type EventHandler } from '../../lambda/consumer/transactional-consumer';
import { RetryableError } from '../../lambda/errors';
import { CONSUMER_METRICS } from '../../lambda/contract/metric-names';
import { startLedgerTestbed, type Deposit, type LedgerTestbed } from '../support/proof/ledger-testbed';
import { envelopeObject, RecordingDeadLetterPublisher, recordingLogger, sqsRecord } from './helpers';

/** A deposit that may also wait for the other batch, or fail. */
interface Step extends Deposit {
  /** `wait`: hold until the other batch is done; `fail`: throw (retried). */
  readonly act?: 'wait' | 'fail';
}

let testbed: LedgerTestbed;

beforeAll(async () => {
  testbed = await startLedgerTestbed('concurrent');
});
afterAll(() => testbed.proxy.stop());

test('two batches of one handler, run concurrently, keep their responses, metrics and outcome lines apart', async () => {
  let releaseWaiting!: () => void;
  const otherBatchDone = new Promise<void>((resolve) => (releaseWaiting = resolve));
  let waitingStarted!: () => void;
  const aWaits = new Promise<void>((resolve) => (waitingStarted = resolve));
  const handle: EventHandler<Step> = async (envelope, tx) => {
    if (envelope.data.act === 'wait') {
      waitingStarted();
      await otherBatchDone;
    }
    if (envelope.data.act === 'fail') throw new RetryableError('not yet');
    testbed.credit(envelope, tx);
  };
  const { logger, lines } = recordingLogger();
  const metrics: Array<Record<string, unknown>> = [];
  const handler = createTransactionalConsumer<Step>({
    handle,
    client: testbed.client,
    config: testbed.config,
    logger,
    deadLetter: new RecordingDeadLetterPublisher(),
    metricsSink: (line) => metrics.push(JSON.parse(line) as Record<string, unknown>),
  });
  const record = (data: Step) => sqsRecord(JSON.stringify(envelopeObject({ data })));
  // batch A: one record done at once, one failing, one waiting for batch B to finish
  const a = [record({ account: 'a1', amount: 1 }), record({ account: 'a2', amount: 1, act: 'fail' }), record({ account: 'a3', amount: 1, act: 'wait' })];
  // batch B: two records, both processed while A is still running
  const b = [record({ account: 'b1', amount: 1 }), record({ account: 'b2', amount: 1 })];

  const runningA = handler({ Records: a });
  await aWaits; // A is running: its third record waits (for B), whatever this machine's speed
  const responseB = await handler({ Records: b });
  releaseWaiting();
  const responseA = await runningA;

  expect(responseB.batchItemFailures).toEqual([]);
  expect(responseA.batchItemFailures).toEqual([{ itemIdentifier: a[1]?.messageId }]);
  const counts = metrics.map((line) => [line[CONSUMER_METRICS.PROCESSED], line[CONSUMER_METRICS.FAILED]]);
  expect(counts).toEqual([
    [2, 0], // B's line, written first: B's records only
    [2, 1], // A's line
  ]);
  const idsOf = (batch: typeof a) => batch.map((r) => r.messageId).sort();
  const linesOf = (batch: typeof a) => lines.filter((line) => idsOf(batch).includes(String(line.sqsMessageId)));
  expect(linesOf(a).map((line) => line.sqsMessageId).sort()).toEqual(idsOf(a));
  expect(linesOf(b).map((line) => line.sqsMessageId).sort()).toEqual(idsOf(b));
  const recordLines = lines.filter((line) => line.sqsMessageId !== undefined);
  expect(linesOf(a).length + linesOf(b).length).toBe(recordLines.length);
  // each batch's summary line counts its own records only
  expect(lines.filter((line) => line.message === 'batch').map((line) => [line.records, line.outcomes])).toEqual([
    [2, { processed: 2 }],
    [3, { processed: 2, failed: 1 }],
  ]);
});
