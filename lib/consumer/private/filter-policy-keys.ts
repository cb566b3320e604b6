import { Annotations } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import { ENVELOPE_ATTRIBUTE_NAMES, keysOutsideEnvelope } from '../../../lambda/contract/envelope-attributes';

/** The id of the warning {@link warnOnKeysOutsideEnvelope} adds: `Annotations.of(subscriber).acknowledgeWarning(id)` silences it. */
export const FILTER_KEY_WARNING_ID = 'idempotent-event-flow:filterPolicyKeyNotInEnvelope';

/**
 * Warns (on `scope`) about each top-level key of a message-body filter policy that is not an attribute of the event
 * envelope: the relay publishes the CloudEvents envelope as the body, so such a key matches no event, e.g. `eventType`
 * where the envelope says `type`, or a field of the event's data not put under `data`.
 */
export function warnOnKeysOutsideEnvelope(scope: Construct, owner: string, policy: Readonly<Record<string, unknown>> | undefined): void {
  if (policy === undefined) return;
  for (const key of keysOutsideEnvelope(Object.keys(policy))) {
    Annotations.of(scope).addWarningV2(
      FILTER_KEY_WARNING_ID,
      `${owner}: filterPolicyWithMessageBody key '${key}' is not an attribute of the event envelope (${ENVELOPE_ATTRIBUTE_NAMES.join(', ')}), ` +
        `so no event matches it: the body is the envelope, and a field of the event's data is matched under 'data' ` +
        `(e.g. { data: sns.FilterOrPolicy.policy({ ${key}: ... }) }). If the key is meant, silence this with ` +
        `Annotations.of(subscriber).acknowledgeWarning('${FILTER_KEY_WARNING_ID}')`,
    );
  }
}
