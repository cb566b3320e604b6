/**
 * The planted protocol mutations of lambda/ that the runtime's tests must kill (issue 19): `npm run test:mutants`
 * applies each alone, runs its test files, and expects a failure. Each names the rule it breaks; `find` must occur
 * exactly once in `file` (the runner refuses a list that no longer fits the code).
 */

/** One planted mutation. */
export interface Mutant {
  readonly id: string;
  /** The protocol rule it breaks. */
  readonly breaks: string;
  /** Path from the repository root. */
  readonly file: string;
  readonly find: string;
  readonly replace: string;
  /** The test files that must catch it. */
  readonly tests: readonly string[];
}

const MODEL = 'test/lambda/model/exactly-once.model.int.test.ts';
const DEFECTS = 'test/lambda/exactly-once-defects.int.test.ts';
const LEASE = 'test/lambda/processing/lease-consumer.int.test.ts';
const STEPS = 'test/lambda/processing/multi-step-consumer.int.test.ts';
const CONSUMER = 'test/lambda/consumer.int.test.ts';
const AGGREGATE = 'test/lambda/aggregate.int.test.ts';
const BATCH = 'test/lambda/concurrent-batch.int.test.ts';

export const MUTANTS: readonly Mutant[] = [
  {
    id: 'blocked-copy-acked-unkept',
    breaks: 'defect 1: a copy of a blocked message is acknowledged although nothing is known to keep the message',
    file: 'lambda/processing/step-engine.ts',
    find: 'if (keptBy !== undefined && !isDeadLetter(context.sqsRecord)) {',
    replace:
      'if ((keptBy !== undefined || (existing.blocked?.sqsMessageId !== undefined && existing.blocked.sqsMessageId !== context.sqsRecord.messageId)) && !isDeadLetter(context.sqsRecord)) {',
    tests: [MODEL, LEASE],
  },
  {
    id: 'event-reused-across-runs',
    breaks: 'defect 2: user code gets the same event object on every run of one delivery',
    file: 'lambda/consumer/process-message.ts',
    find: 'const freshEnvelope = (): EventEnvelope<TData> => parsePayload(parseEnvelope<unknown>(record.body, { logPayloadValues }), deps.parse, logPayloadValues);',
    replace: 'const freshEnvelope = (): EventEnvelope<TData> => envelope;',
    tests: [MODEL],
  },
  {
    id: 'every-validation-exception-permanent',
    breaks: 'defect 3: a write refused only in the item\'s current state is dead-lettered at once',
    file: 'lambda/transaction/writable-values.ts',
    find: '  return ITEM_STATE_VALIDATION_MESSAGES.some((pattern) => pattern.test(message));',
    replace: '  return ITEM_STATE_VALIDATION_MESSAGES.length < 0 && message.length < 0;',
    tests: [MODEL],
  },
  {
    id: 'landed-commit-counted-duplicate',
    breaks: "defect 5: a delivery's own landed commit (response lost) is not recognised by its write token",
    file: 'lambda/consumer/inbox.ts',
    find: "if (stored !== undefined && storedString(stored, INBOX_ITEM.LAST_WRITE_ATTRIBUTE) === writeToken) return { outcome: 'processed' };\n          return this.duplicate(",
    replace: 'return this.duplicate(',
    tests: [MODEL, DEFECTS],
  },
  {
    id: 'lease-write-without-owner',
    breaks: 'a fenced write of the lease holder is not conditioned on its ownership and version',
    file: 'lambda/processing/record-store.ts',
    find: "const HELD_BY_ME = '#owner = :owner AND #version = :observedVersion';",
    replace: "const HELD_BY_ME = '(attribute_not_exists(#owner) OR #owner = :owner OR #owner <> :owner) AND (#version = :observedVersion OR #version <> :observedVersion)';",
    tests: [MODEL, LEASE],
  },
  {
    id: 'no-clock-skew-allowance',
    breaks: "the lease's clock-skew allowance is skipped: a lease is over for a delivery whose clock runs ahead",
    file: 'lambda/processing/record-store.ts',
    find: 'this.skewAllowanceMilliseconds = (options.clockSkewAllowanceSeconds ?? DEFAULT_CLOCK_SKEW_ALLOWANCE_SECONDS) * 1000;',
    replace: 'this.skewAllowanceMilliseconds = 0 * (options.clockSkewAllowanceSeconds ?? DEFAULT_CLOCK_SKEW_ALLOWANCE_SECONDS);',
    tests: [MODEL, LEASE],
  },
  {
    id: 'lease-over-not-checked-by-dynamodb',
    breaks: 'the takeover and the expired-lease block are not conditioned on the lease being over in DynamoDB itself',
    file: 'lambda/processing/record-store.ts',
    find: "const LEASE_OVER = '(attribute_not_exists(#lease) OR #lease <= :leaseOverBy)';",
    replace: "const LEASE_OVER = '(attribute_not_exists(#lease) OR #lease <= :leaseOverBy OR #lease > :leaseOverBy)';",
    tests: [MODEL, LEASE],
  },
  {
    id: 'inbox-put-unconditioned',
    breaks: 'the inbox record is written whatever record exists: a redelivery applies again',
    file: 'lambda/consumer/inbox.ts',
    find: 'const RECORD_CLAIMABLE = `${RECORD_ABSENT} OR ${RECORD_EXPIRED}`;',
    replace: 'const RECORD_CLAIMABLE = `${RECORD_ABSENT} OR ${RECORD_EXPIRED} OR attribute_exists(#pk)`;',
    tests: [MODEL],
  },
  {
    id: 'fingerprint-not-compared',
    breaks: 'a reused event id with another payload is taken for a redelivery',
    file: 'lambda/consumer/inbox.ts',
    find: 'if (storedFingerprint !== undefined && storedFingerprint !== fingerprint) {',
    replace: 'if (storedFingerprint !== undefined && storedFingerprint !== fingerprint && fingerprint.length < 0) {',
    tests: [MODEL, CONSUMER],
  },
  {
    id: 'failures-acknowledged',
    breaks: 'a failed record is not reported as a batch item failure: SQS deletes a message that was not applied',
    file: 'lambda/consumer/batch.ts',
    find: "export const RETRIED_OUTCOMES: ReadonlySet<RecordOutcome> = new Set(['failed', 'skipped']);",
    replace: "export const RETRIED_OUTCOMES: ReadonlySet<RecordOutcome> = new Set(['skipped']);",
    tests: [MODEL],
  },
  {
    id: 'acknowledged-before-commit',
    breaks: 'the message is acknowledged before its commit is known to have landed',
    file: 'lambda/consumer/process-message.ts',
    find: '    const result = await deps.execute(envelope, context);',
    replace: "    void deps.execute(envelope, context).catch(() => undefined);\n    const result: ExecutionResult = { outcome: 'processed' };",
    tests: [MODEL],
  },
  {
    id: 'dead-letter-send-failure-acknowledged',
    breaks: 'a message whose dead-letter send failed is acknowledged anyway: nothing keeps it',
    file: 'lambda/consumer/process-message.ts',
    find: "    log.error('failed', { ...fields, outcome: 'failed', error, publishError, detail: 'dead-letter send failed; left for SQS redrive' });\n    return 'failed';",
    replace: "    log.error('failed', { ...fields, outcome: 'failed', error, publishError, detail: 'dead-letter send failed; left for SQS redrive' });\n    return outcome;",
    tests: [MODEL],
  },
  {
    id: 'unknown-outcome-retried',
    breaks: 'a step whose outcome is unknown is released and run again instead of blocked',
    file: 'lambda/processing/step-engine.ts',
    find: "    if (kind === 'unknown') {",
    replace: "    if (kind === 'unknown' && step.length < 0) {",
    tests: [MODEL],
  },
  {
    id: 'blocked-record-taken-over',
    breaks: 'a BLOCKED record is treated like an expired IN_PROGRESS one: it runs on its own',
    file: 'lambda/processing/step-engine.ts',
    find: '    if (existing.status === RECORD_STATUS.BLOCKED) {',
    replace: '    if (existing.status === RECORD_STATUS.BLOCKED && existing.version < 0) {',
    tests: [MODEL, LEASE],
  },
  {
    id: 'batch-read-accepts-in-progress',
    breaks: 'the batch read takes an IN_PROGRESS processing record for proof that the event applied',
    file: 'lambda/consumer/known-records.ts',
    find: '  if (isProcessingRecord) return item[PROCESSING_RECORD.STATUS_ATTRIBUTE] === RECORD_STATUS.COMPLETED ? { fingerprint } : undefined;',
    replace: '  if (isProcessingRecord) return { fingerprint };',
    tests: [MODEL, LEASE, STEPS],
  },
  {
    id: 'aggregate-version-unchecked',
    breaks: "the aggregate's write is not conditioned on the version it read: a concurrent change is overwritten",
    file: 'lambda/aggregate/aggregate-store.ts',
    find: "const VERSION_UNCHANGED = '#version = :expectedVersion';",
    replace: "const VERSION_UNCHANGED = '(#version = :expectedVersion OR #version <> :expectedVersion)';",
    tests: [MODEL, AGGREGATE],
  },
  {
    id: 'conflict-retry-reuses-token-for-other-delivery',
    breaks: 'every delivery shares one write token: a redelivery of an applied event is counted processed',
    file: 'lambda/consumer/transactional-consumer.ts',
    find: '      const writeToken = inbox.newWriteToken();',
    replace: "      const writeToken = 'shared-by-every-delivery';",
    tests: [MODEL, DEFECTS],
  },
  {
    id: 'adaptive-read-learns-only-from-reads',
    breaks:
      'the per-batch read decision counts only the redeliveries its reads found: a read that is off never sees one (its writes find them) and stays off whatever the redeliveries',
    file: 'lambda/consumer/create-consumer.ts',
    find: "readPolicy?.observe(eventIds.length, (outcomes.duplicate ?? 0) - (knownRecords?.copiesRecognisedInBatch ?? 0));",
    replace: "readPolicy?.observe(eventIds.length, reads ? (outcomes.duplicate ?? 0) - (knownRecords?.copiesRecognisedInBatch ?? 0) : 0);",
    tests: [MODEL, BATCH],
  },
];
