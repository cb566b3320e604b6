/**
 * The errors the simulated SQS refuses a request with, by the names SQS gives them, so the SQS endpoint can answer
 * exactly as SQS does: a JSON body `{ "__type": "com.amazonaws.sqs#<name>", "message": ... }` and the
 * `x-amzn-query-error: <query code>;Sender` header (sqs-json-api-responses.html). The query codes are those of the
 * SQS service model (@aws-sdk/client-sqs error schemas, `awsQueryError`).
 */

/** What SQS says for each error the simulator raises. */
const SQS_ERROR_CODES = {
  QueueDoesNotExist: { queryCode: 'AWS.SimpleQueueService.NonExistentQueue', httpStatus: 400 },
  UnsupportedOperation: { queryCode: 'AWS.SimpleQueueService.UnsupportedOperation', httpStatus: 400 },
  InvalidMessageContents: { queryCode: 'InvalidMessageContents', httpStatus: 400 },
  /** Not a modelled shape: SQS answers `InvalidParameterValue` for bad parameters (e.g. a FIFO send without MessageGroupId). */
  InvalidParameterValueException: { queryCode: 'InvalidParameterValue', httpStatus: 400 },
  /** Not a modelled shape: a required parameter is missing. */
  MissingRequiredParameterException: { queryCode: 'MissingParameter', httpStatus: 400 },
  InvalidAttributeName: { queryCode: 'InvalidAttributeName', httpStatus: 400 },
  ReceiptHandleIsInvalid: { queryCode: 'ReceiptHandleIsInvalid', httpStatus: 404 },
  EmptyBatchRequest: { queryCode: 'AWS.SimpleQueueService.EmptyBatchRequest', httpStatus: 400 },
  TooManyEntriesInBatchRequest: { queryCode: 'AWS.SimpleQueueService.TooManyEntriesInBatchRequest', httpStatus: 400 },
  BatchEntryIdsNotDistinct: { queryCode: 'AWS.SimpleQueueService.BatchEntryIdsNotDistinct', httpStatus: 400 },
  InvalidBatchEntryId: { queryCode: 'AWS.SimpleQueueService.InvalidBatchEntryId', httpStatus: 400 },
  BatchRequestTooLong: { queryCode: 'AWS.SimpleQueueService.BatchRequestTooLong', httpStatus: 400 },
  /** ChangeMessageVisibility of a message that is not in flight. */
  MessageNotInflight: { queryCode: 'AWS.SimpleQueueService.MessageNotInflight', httpStatus: 400 },
  /** StartMessageMoveTask or ListMessageMoveTasks naming a queue ARN that does not exist. */
  ResourceNotFoundException: { queryCode: 'ResourceNotFoundException', httpStatus: 404 },
  /** IAM (or the queue's policy, or its key's policy) does not allow the request. */
  AccessDeniedException: { queryCode: 'AccessDenied', httpStatus: 403 },
} as const;

/** The name of an SQS error (the part after `#` in `__type`). */
export type SqsErrorName = keyof typeof SQS_ERROR_CODES;

/** A request SQS would refuse; always the sender's fault. */
export class SqsError extends Error {
  /** `x-amzn-query-error` code, e.g. `AWS.SimpleQueueService.NonExistentQueue` */
  public readonly queryCode: string;
  public readonly httpStatus: number;

  public constructor(
    /** e.g. `QueueDoesNotExist` */
    public readonly errorName: SqsErrorName,
    message: string,
  ) {
    super(message);
    this.name = 'SqsError';
    this.queryCode = SQS_ERROR_CODES[errorName].queryCode;
    this.httpStatus = SQS_ERROR_CODES[errorName].httpStatus;
  }
}
