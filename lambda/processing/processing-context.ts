/**
 * The processing context: what steps store for later steps (e.g. the created invoice id). It lives in the processing
 * record, so it is kept JSON-shaped and far below DynamoDB's 400 KB item limit, measured with the runtime's DynamoDB
 * item-size calculator (transaction/item-size.ts).
 */
import { PermanentError } from '../errors';
import { attributeValueSize } from '../transaction/item-size';

/**
 * Largest processing context, in bytes as DynamoDB counts them. With a blocked message's body (up to
 * {@link MAX_BLOCKED_BODY_BYTES}) and the bookkeeping attributes, the record stays below 400 KB, unless the operators'
 * audit list is unusually long (long non-ASCII reasons): a block is then written without the body.
 */
export const MAX_CONTEXT_BYTES = 64 * 1024;

/**
 * Longest SQS body kept on a blocked record for the operator; a longer one is left out (the DLQ has it anyway), as is
 * one that would take the record over DynamoDB's item limit.
 */
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

/**
 * Deepest nesting of maps and lists a context may have, the context map itself counting as 1: DynamoDB refuses an item
 * whose attributes nest 32 levels deep (checked against DynamoDB Local).
 */
export const MAX_CONTEXT_DEPTH = 31;

/** Smallest magnitude of a non-zero number DynamoDB stores (1E-130); a smaller one is refused as an underflow. */
const MIN_NUMBER_MAGNITUDE = 1e-130;

/**
 * Why a JSON-normalized value can not be written as DynamoDB stores it through the DocumentClient, or undefined when it
 * can: a number beyond Number.MAX_SAFE_INTEGER (the DocumentClient refuses to send it, and it is not exact anyway), a
 * non-zero number smaller than 1E-130 (DynamoDB underflow), an empty map key or one named `__proto__` (lost when read
 * back into an object), or nesting deeper than {@link MAX_CONTEXT_DEPTH}.
 */
function unstorable(value: unknown, path: string, depth: number): string | undefined {
  if (typeof value === 'number') {
    if (Math.abs(value) > Number.MAX_SAFE_INTEGER) return `${path} is ${value}, beyond Number.MAX_SAFE_INTEGER (store it as a string)`;
    if (value !== 0 && Math.abs(value) < MIN_NUMBER_MAGNITUDE) return `${path} is ${value}, smaller than DynamoDB's smallest number 1E-130`;
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  if (depth > MAX_CONTEXT_DEPTH) return `${path} nests deeper than ${MAX_CONTEXT_DEPTH} levels of maps and lists`;
  if (Array.isArray(value)) {
    for (const [index, element] of value.entries()) {
      const problem = unstorable(element, `${path}[${index}]`, depth + 1);
      if (problem !== undefined) return problem;
    }
    return undefined;
  }
  for (const [key, element] of Object.entries(value)) {
    if (key === '') return `${path} has an empty key, which DynamoDB refuses`;
    // the DocumentClient (and the runtime) read a map into a plain object, where this key sets the prototype instead
    if (key === '__proto__') return `${path} has the key '__proto__', which would be lost when the context is read back`;
    const problem = unstorable(element, `${path}.${key}`, depth + 1);
    if (problem !== undefined) return problem;
  }
  return undefined;
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
 * @throws ProcessingContextError when `addition` is not a plain object, holds a value that can not be stored (a number
 * beyond Number.MAX_SAFE_INTEGER or below 1E-130 in magnitude, an empty key or `__proto__`, nesting deeper than
 * {@link MAX_CONTEXT_DEPTH}), or the result exceeds {@link MAX_CONTEXT_BYTES}
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
  const problem = unstorable(normalized, 'context', 1);
  if (problem !== undefined) throw new ProcessingContextError(`${what} can not be stored: ${problem}`);
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
