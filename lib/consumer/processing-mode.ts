/**
 * How a subscriber's runtime makes a message take effect once. Each mode has its own runtime factory in
 * `@idempotent-event-flow/runtime`; the construct sets the mode in the function's environment (`IEF_PROCESSING_MODE`)
 * and each factory refuses to run under another mode, so a handler can not silently run without the IAM grants,
 * tables and settings its mode needs.
 *
 * The values are the runtime's `PROCESSING_MODE` names (`lambda/contract/environment.ts`); the build fails if they ever differ.
 */
export enum ProcessingMode {
  /**
   * The handler's DynamoDB writes and the inbox record commit in ONE transaction.
   *
   * Use it when the whole effect is DynamoDB writes (up to 99 staged actions). Guarantees exactly-once effect per
   * subscriber within the deduplication window: a redelivery finds the inbox record and applies nothing, and two
   * concurrent deliveries can not both commit. The handler calls `createTransactionalConsumer` from
   * `@idempotent-event-flow/runtime`. The function gets `dynamodb:BatchGetItem` and `dynamodb:PutItem` on the inbox table.
   */
  TRANSACTIONAL = 'transactional',

  /**
   * An owner-fenced lease (a processing record in the inbox table) around an effect outside DynamoDB, e.g. a call
   * to a payment API that takes an idempotency key.
   *
   * Use it when the effect can not join a DynamoDB transaction. Guarantees that the effect runs at most once per
   * message: at most one delivery works on a message at a time, a completed message is acknowledged without running
   * again, and a delivery that loses its lease (it ran past `leaseDuration`) can neither record completion nor release
   * a newer owner's lease. When the outcome of an attempt is unknown (an unclassified error, or a delivery that died
   * mid-effect), the message is blocked for an operator instead of being retried blindly: it goes to the dead-letter
   * queue with the reason and stays blocked until an operator marks it SUCCESS or TRY_AGAIN (see the `Blocked`
   * alarm and `npx idempotent-event-flow blocked`). The handler calls `createLeaseConsumer`. The function gets `dynamodb:GetItem`,
   * `dynamodb:PutItem` and `dynamodb:UpdateItem` on the inbox table; not `dynamodb:BatchGetItem`, whose batch read is
   * off by default in this mode (with `batchRead: true`, add `inboxTable.grantBatchRead(consumerFunction)`).
   */
  LEASE = 'lease',

  /**
   * Ordered, named steps whose status and context persist in a processing record, each step under a lease.
   *
   * Use it for a message that drives several effects (e.g. create an invoice, then charge it, then notify), so a
   * retry resumes after the last completed step instead of starting over. Guarantees per step what `LEASE`
   * guarantees per message; a step whose outcome is unknown blocks the message for an operator. The handler calls
   * `createMultiStepConsumer`. The function gets `dynamodb:GetItem`, `dynamodb:PutItem` and
   * `dynamodb:UpdateItem` on the inbox table; not `dynamodb:BatchGetItem`, whose batch read is off by default in this
   * mode (with `batchRead: true`, add `inboxTable.grantBatchRead(consumerFunction)`).
   */
  MULTI_STEP = 'multi-step',

  /**
   * Optimistic concurrency on one item of your own table (an aggregate) that carries the ids of the messages applied
   * to it: the update and the id commit together, conditioned on the item's version.
   *
   * Use it when every message changes exactly one item, e.g. a per-account balance. Guarantees exactly-once effect
   * per aggregate item for as long as the item keeps the message id; there is no inbox table, so the subscriber
   * creates none and takes neither `inboxTable` nor `deduplicationWindow`. Grant the function access to your
   * aggregate table yourself. The handler calls `createAggregateConsumer`.
   */
  AGGREGATE = 'aggregate',
}
