/** Shared fixtures of the lease and multi-step tests. Not a test file (vitest only runs `*.test.ts`). */
import { randomUUID } from 'node:crypto';
import { envelopeObject } from '../helpers';

/** Also here for the CLI tests, which import them from this file. */
export { FakeClock } from '../../support/proof/fake-clock';
export { createInboxTable } from '../../support/proof/tables';

/** A message: its envelope id, data and SQS body. */
export interface TestMessage {
  readonly id: string;
  readonly envelope: Record<string, unknown>;
  readonly body: string;
}

/** A new message with a unique id (or the given one) and data. */
export function newMessage(data: Record<string, unknown> = { invoiceFor: 'order-1', amountCents: 1200 }, overrides: Record<string, unknown> = {}): TestMessage {
  const envelope = envelopeObject({ id: `evt-${randomUUID()}`, type: 'OrderPaid', data, ...overrides });
  return { id: envelope.id as string, envelope, body: JSON.stringify(envelope) };
}

/** A promise with its resolve function, to hold an effect until the test lets it go. */
export function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((done) => {
    resolve = done;
  });
  return { promise, resolve };
}
