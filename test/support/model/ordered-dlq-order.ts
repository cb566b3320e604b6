/**
 * The order the ordered model puts its dead letters in a FIFO dead-letter queue before an operator's redrive (review
 * ro13, RO13-8): as the model holds them, or with each aggregate's lowest sequence last, so its next event can sit
 * behind ten letters that all wait for it (a letter redriven while its handler still failed comes back last). Not a
 * test file.
 */
import type { OrderedEnvelope } from '../../../lambda/ordered/ordered-outbox';

/** `model`: the model's order; `next-last`: per aggregate, the letters of its lowest sequence behind the others. */
export type DeadLetterOrder = 'model' | 'next-last';

/** The letters in `order` (a stable reordering: the model's order otherwise kept). */
export function orderedForQueue<T extends { readonly envelope: OrderedEnvelope }>(letters: readonly T[], order: DeadLetterOrder): T[] {
  if (order === 'model') return [...letters];
  const lowest = new Map<string, number>();
  for (const letter of letters) {
    const sequence = Number(letter.envelope.sequence);
    lowest.set(letter.envelope.partitionkey, Math.min(lowest.get(letter.envelope.partitionkey) ?? sequence, sequence));
  }
  const isNext = (letter: T): boolean => Number(letter.envelope.sequence) === lowest.get(letter.envelope.partitionkey);
  return [...letters.filter((letter) => !isNext(letter)), ...letters.filter(isNext)];
}
