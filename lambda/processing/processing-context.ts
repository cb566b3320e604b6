/**
 * The processing context: what steps store for later steps (e.g. the created invoice id). It lives in the processing
 * record, so it is kept JSON-shaped and far below DynamoDB's 400 KB item limit, measured with the runtime's DynamoDB
 * item-size calculator (transaction/item-size.ts).
 */
import { PermanentError } from '../errors';
import { attributeValueSize } from '../transaction/item-size';

/**
 * Largest processing context, in bytes as DynamoDB counts them. With a blocked message's body (up to
 * {@link MAX_BLOCKED_BODY_BYTES}) and the bookkeeping attributes, the record stays far below 400 KB.
 */
export const MAX_CONTEXT_BYTES = 64 * 1024;

/** Longest SQS body kept on a blocked record for the operator; a longer one is left out (the DLQ has it anyway). */
export const MAX_BLOCKED_BODY_BYTES = 256 * 1024;

/**
 * A step's output (or an operator's context) that can not be stored in the processing record: not a plain JSON
 * object, or too large. A member of the PermanentError family: retrying the same step can not make it fit.
 */
export class ProcessingContextError extends PermanentError {
  public constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'ProcessingContextError';
  }
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const prototype = Object.getPrototypeOf(value) as unknown;
  return prototype === Object.prototype || prototype === null;
}

/**
 * Returns `base` with `addition` merged in (top-level keys replace), as stored: JSON-normalized (a `Date` becomes its
 * ISO string, `undefined` values are dropped).
 *
 * @param what names the addition in errors, e.g. `the output of step 'create-invoice'`
 * @throws ProcessingContextError when `addition` is not a plain object or the result exceeds {@link MAX_CONTEXT_BYTES}
 */
export function mergeContext(base: Readonly<Record<string, unknown>>, addition: unknown, what: string): Record<string, unknown> {
  if (addition === undefined || addition === null) return { ...base };
  if (!isPlainObject(addition)) {
    throw new ProcessingContextError(`${what} must be a plain object (or nothing), but was ${Array.isArray(addition) ? 'an array' : typeof addition}`);
  }
  let normalized: Record<string, unknown>;
  try {
    normalized = JSON.parse(JSON.stringify(addition)) as Record<string, unknown>;
  } catch (error) {
    throw new ProcessingContextError(`${what} must be JSON-serializable: ${(error as Error).message}`, { cause: error });
  }
  const merged = { ...base, ...normalized };
  const sizeBytes = attributeValueSize(merged);
  if (sizeBytes > MAX_CONTEXT_BYTES) {
    throw new ProcessingContextError(
      `the processing context with ${what} would be ${sizeBytes} bytes, over the limit of ${MAX_CONTEXT_BYTES} bytes; ` +
        'store large data elsewhere (e.g. S3) and keep only its key in the context',
    );
  }
  return merged;
}
