/** The wiring the lease and multi-step factories share: configuration, record store, engine and batch handler. */
import { randomUUID } from 'node:crypto';
import { assertProcessingMode, loadLeaseConsumerConfig, ConfigurationError } from '../config';
import { appliedRecordLookup } from '../consumer/applied-lookup';
import { consumerLogger, createBatchHandler, type SqsBatchHandler } from '../consumer/create-consumer';
import { toDocumentClient } from '../transaction/document-client';
import { defaultErrorClassifier } from './error-classification';
import { DEFAULT_CLOCK_SKEW_ALLOWANCE_SECONDS, ProcessingRecordStore } from './record-store';
import { createStepExecutor, type EngineStep } from './step-engine';
import type { LeaseProcessingOptions } from './types';
import { validateLeaseOptions } from './validate-options';

/** What a factory adds to the shared wiring. */
export interface LeaseProcessingSetup<TData> {
  readonly mode: 'lease' | 'multi-step';
  readonly factoryName: string;
  readonly options: LeaseProcessingOptions<TData>;
  readonly steps: readonly EngineStep<TData>[];
  readonly idempotencyKey: (recordKey: string, step: string) => string;
}

/** Builds the batch handler of a lease or multi-step consumer. */
export function createLeaseProcessingHandler<TData>(setup: LeaseProcessingSetup<TData>): SqsBatchHandler {
  const { options } = setup;
  validateLeaseOptions(options as LeaseProcessingOptions<unknown>, setup.factoryName);
  const config = options.config ?? loadLeaseConsumerConfig();
  assertProcessingMode(config, setup.mode, setup.factoryName);
  // an explicit config skips the environment's checks: a window of 0 (or NaN) would let every record expire at once
  for (const name of ['leaseDurationSeconds', 'deduplicationWindowSeconds'] as const) {
    if (!Number.isInteger(config[name]) || config[name] <= 0) {
      throw new ConfigurationError(`${setup.factoryName}: ${name} must be a positive whole number of seconds, but ${config[name]} was given`);
    }
  }
  const now = options.now ?? (() => new Date());
  const logger = consumerLogger(config, setup.mode, options.logger);
  const client = toDocumentClient(options.client);
  const store = new ProcessingRecordStore({
    client,
    tableName: config.inboxTableName,
    subscriberName: config.subscriberName,
    deduplicationWindowSeconds: config.deduplicationWindowSeconds,
    leaseDurationSeconds: config.leaseDurationSeconds,
    clockSkewAllowanceSeconds: options.clockSkewAllowanceSeconds ?? DEFAULT_CLOCK_SKEW_ALLOWANCE_SECONDS,
    keepBlockedBody: config.keepBlockedMessageBody ?? false,
    mode: setup.mode,
    now,
  });
  const completedRecords = { client, tableName: config.inboxTableName, subscriberName: config.subscriberName, accepts: 'completed' as const };
  return createBatchHandler<TData>({
    config,
    processingMode: setup.mode,
    options,
    logger,
    now,
    // when asked: a COMPLETED record answers a redelivery before any claim (else the failed claim does)
    ...(options.batchRead === true ? { knownRecordsSource: completedRecords } : {}),
    // an offloaded event whose object is missing is looked up before it is dead-lettered (R7-3)
    // GetItem: what a lease or multi-step consumer is granted (BatchGetItem only with batchRead)
    appliedLookup: appliedRecordLookup(completedRecords, now, 'get'),
    // the blocked message's dead letter was sent: noted on the record, so a later copy is acknowledged, not dead-lettered
    onBlockedDeadLetter: async ({ eventId, sqsMessageId, recordVersion }) => void (await store.recordBlockedDeadLetter(eventId, sqsMessageId, recordVersion)),
    execute: createStepExecutor<TData>({
      store,
      steps: setup.steps,
      subscriberName: config.subscriberName,
      onExpiredLease: options.onExpiredLease ?? 'block',
      classifyError: options.classifyError ?? defaultErrorClassifier,
      logPayloadValues: options.logPayloadValues === true,
      newOwnerToken: options.newOwnerToken ?? randomUUID,
      now,
      idempotencyKey: setup.idempotencyKey,
    }),
  });
}
