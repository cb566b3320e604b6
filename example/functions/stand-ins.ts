/**
 * The example's stand-ins for systems outside DynamoDB: an "accounting system" (the `AccountingInvoicesTable`) and a
 * "mail gateway" (the `MailTable`). So that the example deploys with nothing but AWS, each is a DynamoDB table, but it
 * is called the way an HTTP API would be: one plain, NON-transactional request per call, which can not join the inbox
 * transaction and whose effect happens again when the call runs again (a second invoice, a second mail). Such effects
 * are what the lease and multi-step modes are for.
 *
 * What a failed call tells the runtime decides what happens to the message ({@link standInFailure}).
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { PermanentError, RetryableError } from '../../lambda/index';

/** Errors of a request that DynamoDB refused before applying it: nothing was written, trying again is safe. */
const REFUSED_BEFORE_WRITING: ReadonlySet<string> = new Set(['ProvisionedThroughputExceededException', 'ThrottlingException', 'RequestLimitExceeded']);

/**
 * The error a step or lease handler throws when a call to stand-in `system` failed:
 * - refused (throttled) before writing → `RetryableError`: the runtime releases the lease and the message is retried;
 * - rejected as invalid (`ValidationException`) → `PermanentError`: nothing was written, and the same call would be
 *   rejected again, so the message is dead-lettered;
 * - anything else (a timeout, a lost connection, a server error) → the error itself: the call may or may not have taken
 *   effect, so the runtime blocks the message for an operator (dead-letter queue + `Blocked` alarm) instead of risking
 *   a second invoice or mail.
 */
export function standInFailure(system: string, error: unknown): Error {
  const name = error instanceof Error ? error.name : '';
  const detail = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  if (REFUSED_BEFORE_WRITING.has(name)) {
    return new RetryableError(`the ${system} refused the call (${detail}); nothing was written, so it is tried again`, { cause: error });
  }
  if (name === 'ValidationException') {
    return new PermanentError(`the ${system} rejected the call as invalid (${detail}); nothing was written, and retrying would not help`, { cause: error });
  }
  return error instanceof Error ? error : new Error(detail);
}

/**
 * The client of the mail gateway stand-in: it never re-sends a call. A mail API call is not idempotent (the same
 * request sent twice sends two mails), so, like an HTTP client posting to such an API, it does not retry on its own
 * after a timeout or a lost connection; the error reaches the runtime, which blocks the message for an operator
 * because the mail may or may not have gone out. (The SDK's default of 3 attempts would silently send a second mail
 * whenever a response is lost; `npx idempotent-event-flow simulate` catches exactly that.)
 */
export function mailGatewayClient(): DynamoDBClient {
  return new DynamoDBClient({ maxAttempts: 1 });
}
