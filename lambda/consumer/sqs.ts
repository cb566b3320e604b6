/**
 * The parts of the Lambda SQS event and batch response the consumer uses. Structural, so `@types/aws-lambda`'s
 * `SQSEvent` is accepted and its `SQSBatchResponse` is satisfied without a runtime dependency on those types.
 */

/** One SQS message as Lambda delivers it. */
export interface SQSRecord {
  readonly messageId: string;
  /** The handle of this receive of the message (Lambda sets it; every receive has its own). */
  readonly receiptHandle?: string;
  readonly body: string;
  /**
   * System attributes; `ApproximateReceiveCount` is a decimal string. `MessageGroupId` is set on FIFO queues only.
   */
  readonly attributes?: { readonly ApproximateReceiveCount?: string; readonly MessageGroupId?: string };
  /**
   * Message attributes, as Lambda delivers them. A dead letter the runtime sent carries its reason here
   * (`iefErrorName`, ...), also after it was redriven to the queue.
   */
  readonly messageAttributes?: { readonly [name: string]: { readonly stringValue?: string; readonly dataType?: string } | undefined };
}

/** The event Lambda passes to an SQS-triggered function. */
export interface SQSEvent {
  readonly Records: readonly SQSRecord[];
}

/** One message to leave on the queue (it becomes visible again and is retried, then redriven to the DLQ). */
export interface SQSBatchItemFailure {
  itemIdentifier: string;
}

/** The partial batch response (`ReportBatchItemFailures`): only the listed messages are retried. */
export interface SQSBatchResponse {
  batchItemFailures: SQSBatchItemFailure[];
}
