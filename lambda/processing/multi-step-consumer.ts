/** `createMultiStepConsumer`: ordered steps with persisted status and context, each under an owner-fenced lease. */
import { PROCESSING_MODE } from '../contract/environment';
import type { SqsBatchHandler } from '../consumer/create-consumer';
import { INBOX_ITEM } from '../contract/wire-format';
import { createLeaseProcessingHandler } from './create-lease-processing';
import type { MultiStepConsumerOptions, ProcessingStep } from './types';
import { validateSteps } from './validate-options';

/**
 * Creates the Lambda handler of a multi-step consumer (e.g. create an invoice, then email it). Each step's status is
 * persisted: a redelivery skips the steps that succeeded and hands later steps what earlier ones returned
 * (`context.stepContext`). A step that throws `RetryableError` is retried on the next delivery; one whose outcome is
 * unknown blocks the message for an operator, so no step ever runs twice blindly.
 *
 * DynamoDB writes per message: 1 + number of steps. Call it at module scope: configuration is read once and a
 * missing value fails the cold start.
 */
export function createMultiStepConsumer<TData = unknown>(options: MultiStepConsumerOptions<TData>): SqsBatchHandler {
  validateSteps(options?.steps as readonly ProcessingStep<unknown>[] | undefined, 'createMultiStepConsumer');
  return createLeaseProcessingHandler<TData>({
    mode: PROCESSING_MODE.MULTI_STEP,
    factoryName: 'createMultiStepConsumer',
    options,
    idempotencyKey: (recordKey, step) => `${recordKey}${INBOX_ITEM.KEY_SEPARATOR}${step}`,
    steps: options.steps.map((step) => ({ name: step.name, run: (envelope, context) => step.run(envelope, context) })),
  });
}
