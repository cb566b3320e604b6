/**
 * The bounded list of recently applied messages an aggregate item carries (`processedMessages`, see AGGREGATE_ITEM in
 * wire-format.ts): `{ id, fingerprint }` maps, newest last. Pure: no AWS SDK.
 */

/** One applied message, as stored on the aggregate. */
export interface ProcessedMessage {
  /** The event id. */
  readonly id: string;
  /** The payload fingerprint of the event when it was applied; absent only on entries written by hand. */
  readonly fingerprint?: string;
}

/** The default and the bounds of how many processed messages an aggregate remembers. */
export const PROCESSED_MESSAGES_LIMITS = { DEFAULT: 100, MIN: 1, MAX: 1000 } as const;

/** Reads the stored list, ignoring anything that is not a `{ id: string }` map (so a hand-edited item cannot crash it). */
export function parseProcessedMessages(stored: unknown): ProcessedMessage[] {
  if (!Array.isArray(stored)) return [];
  const messages: ProcessedMessage[] = [];
  for (const entry of stored) {
    if (typeof entry !== 'object' || entry === null) continue;
    const { id, fingerprint } = entry as { id?: unknown; fingerprint?: unknown };
    if (typeof id !== 'string') continue;
    messages.push(typeof fingerprint === 'string' ? { id, fingerprint } : { id });
  }
  return messages;
}

/** The entry of `eventId`, if the aggregate remembers applying it. */
export function findProcessed(messages: readonly ProcessedMessage[], eventId: string): ProcessedMessage | undefined {
  return messages.find((message) => message.id === eventId);
}

/** The list with `message` appended, keeping only the newest `limit` entries. */
export function appendProcessed(messages: readonly ProcessedMessage[], message: ProcessedMessage, limit: number): ProcessedMessage[] {
  const appended = [...messages, message];
  return appended.slice(Math.max(0, appended.length - limit));
}
