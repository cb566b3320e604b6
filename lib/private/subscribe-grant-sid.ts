/**
 * The Sid of a topic-policy statement that lets another account subscribe one subscriber's queue. IAM wants a Sid
 * unique within its policy and made of `A-Z a-z 0-9`; a subscriber name may hold other characters, so two names that
 * differ only in those ('Ledger-A', 'LedgerA') would collide once they are dropped. A short hash of the full name
 * keeps them apart.
 */
import { createHash } from 'node:crypto';

/** `AllowSubscribe<name, alphanumerics only><first 8 hex digits of the name's SHA-256>From<account>`. */
export function subscribeGrantSid(subscriberName: string, account: string): string {
  const hash = createHash('sha256').update(subscriberName).digest('hex').slice(0, 8);
  return `AllowSubscribe${subscriberName.replace(/[^A-Za-z0-9]/g, '')}${hash}From${account}`;
}
