/**
 * How an SQS event source mapping with `ReportBatchItemFailures` reads what the function returned, as "Success and
 * failure conditions" of https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-errorhandling.html says:
 * - a complete success: `null`/no response, an empty response (`{}`), a null or empty `batchItemFailures` list;
 * - a complete failure (every message is retried): an invalid response, an empty-string or null `itemIdentifier`,
 *   an entry with a bad key name (no `itemIdentifier`), an `itemIdentifier` that is no message id of the batch;
 * - otherwise exactly the listed messages failed.
 * The simulator also counts as invalid a response that is not a JSON object (a string, a number, an array) and a
 * `batchItemFailures` that is not a list, which Lambda cannot read as a batch response either.
 */

/** What the function's response means for the batch. */
export type BatchResponseVerdict =
  /** These messages failed (none: the whole batch succeeded). */
  | { readonly kind: 'partial'; readonly failedMessageIds: readonly string[] }
  /** The response is invalid: the whole batch failed. */
  | { readonly kind: 'invalid'; readonly reason: string };

/** Reads `response` for a batch of the messages `batchMessageIds`. */
export function readBatchResponse(response: unknown, batchMessageIds: readonly string[]): BatchResponseVerdict {
  if (response === null || response === undefined) return { kind: 'partial', failedMessageIds: [] };
  if (typeof response !== 'object' || Array.isArray(response)) {
    return { kind: 'invalid', reason: `the response is ${Array.isArray(response) ? 'an array' : `a ${typeof response}`}, not an object with batchItemFailures` };
  }
  const failures = (response as { batchItemFailures?: unknown }).batchItemFailures;
  if (failures === null || failures === undefined) return { kind: 'partial', failedMessageIds: [] };
  if (!Array.isArray(failures)) return { kind: 'invalid', reason: `batchItemFailures is a ${typeof failures}, not a list` };
  const inBatch = new Set(batchMessageIds);
  const failed = new Set<string>();
  for (const [index, failure] of failures.entries()) {
    const identifier = typeof failure === 'object' && failure !== null ? (failure as { itemIdentifier?: unknown }).itemIdentifier : undefined;
    if (typeof identifier !== 'string' || identifier === '') {
      return { kind: 'invalid', reason: `batchItemFailures[${index}] has no itemIdentifier (or an empty or non-string one): ${JSON.stringify(failure)}` };
    }
    if (!inBatch.has(identifier)) return { kind: 'invalid', reason: `batchItemFailures[${index}].itemIdentifier '${identifier}' is no message id of the batch` };
    failed.add(identifier);
  }
  return { kind: 'partial', failedMessageIds: [...failed] };
}
