/** `createLeaseConsumer`: one effect outside DynamoDB, run under an owner-fenced lease. */
import { ConfigurationError } from '../config';
import { PROCESSING_MODE } from '../contract/environment';
import type { SqsBatchHandler } from '../consumer/create-consumer';
import { LEASE_STEP_NAME } from '../contract/wire-format';
import { createLeaseProcessingHandler } from './create-lease-processing';
import type { LeaseConsumerOptions } from './types';

/**
 * Creates the Lambda handler of a lease consumer. Each message's effect (`handle`) runs under a lease recorded in the
 * inbox table: a redelivery after success is acknowledged without running it, a concurrent delivery waits, and an
 * effect whose outcome is unknown (the worker crashed, stalled, or threw something other than `RetryableError` or
 * `PermanentError`) blocks the message for an operator instead of running twice.
 *
 * It is the multi-step engine with one step named `effect`: 2 DynamoDB writes per message (claim, complete).
 * Call it at module scope: configuration is read once and a missing value fails the cold start.
 */
export function createLeaseConsumer<TData = unknown>(options: LeaseConsumerOptions<TData>): SqsBatchHandler {
  if (typeof options?.handle !== 'function') throw new ConfigurationError('createLeaseConsumer: handle must be a function');
  return createLeaseProcessingHandler<TData>({
    mode: PROCESSING_MODE.LEASE,
    factoryName: 'createLeaseConsumer',
    options,
    idempotencyKey: (recordKey) => recordKey,
    steps: [
      {
        name: LEASE_STEP_NAME,
        run: async (envelope, context) => {
          await options.handle(envelope, {
            sqsRecord: context.sqsRecord,
            lambdaContext: context.lambdaContext,
            logger: context.logger,
            idempotencyKey: context.idempotencyKey,
            leaseExpiresAtEpochMilliseconds: context.leaseExpiresAtEpochMilliseconds,
            attempt: context.attempt,
          });
        },
      },
    ],
  });
}
