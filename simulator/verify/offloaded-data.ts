/**
 * The data of a verify run's offloaded events (the claim-check, issue 42, docs/LARGE-EVENTS.md). An event whose outbox
 * envelope carries a `dataref` and no `data` is fetched from the flow's payload bucket and verified (size and SHA-256)
 * by the runtime's own reader (lambda/claim-check/resolve-payload.ts over lambda/claim-check/payload-store.ts), as a
 * consumer does before its handler runs, so the scenario's effect probes and its `malformed` see the event as the
 * handlers saw it. Each event's data is fetched once per run (an object is never replaced: its key names its digest);
 * the body, what the filter policies match, stays as it was published (an offloaded envelope has no `data`).
 * Only references into a payload bucket and prefix the flow's consumers read (their `IEF_PAYLOAD_BUCKET_NAME` and
 * `IEF_PAYLOAD_KEY_PREFIX`) are followed, as a consumer follows only its own flow's. An event whose data could not be
 * read keeps no data and says why (`dataUnread`): its object is missing or altered (its consumers dead-letter it too),
 * or the read was refused (verify's role needs `s3:GetObject` on the prefix and `kms:Decrypt` on the flow's key:
 * docs/DEPLOYING.md). A refused or failed read is tried again at the next read of the run's events; a missing or
 * altered object is not.
 */
import type { PayloadReader } from '../../lambda/claim-check/payload-store';
import { isOffloaded, resolvePayload } from '../../lambda/claim-check/resolve-payload';
import { CLAIM_CHECK_ATTRIBUTES, CLAIM_CHECK_ENV, DEFAULT_PAYLOAD_KEY_PREFIX, parseDataRef } from '../../lambda/contract/claim-check';
import type { EventEnvelope } from '../../lambda/envelope';
import { PayloadUnavailableError } from '../../lambda/errors';
import { envelopeObjectOf } from '../aws/message-ids';
import type { SimulatedEvent } from '../observation/run-facts';

/** A committed event as verify read it: the event and the body the relay publishes. */
export interface OffloadableEvent {
  readonly event: SimulatedEvent;
  readonly body: string;
  /**
   * Why the data of this offloaded event could not be read (then `event.data` is undefined).
   * @default absent: inline, or its data was read and verified
   */
  readonly dataUnread?: string;
}

/** A payload bucket and key prefix a consumer of the flow reads. */
export interface PayloadLocation {
  readonly bucketName: string;
  readonly keyPrefix: string;
}

/** The payload buckets and prefixes the consumers of the flow read, from their environments (each once). */
export function payloadLocationsOf(environments: readonly Readonly<Record<string, string>>[]): PayloadLocation[] {
  const found = new Map<string, PayloadLocation>();
  for (const environment of environments) {
    const bucketName = environment[CLAIM_CHECK_ENV.PAYLOAD_BUCKET_NAME]?.trim();
    if (bucketName === undefined || bucketName === '') continue;
    const keyPrefix = environment[CLAIM_CHECK_ENV.PAYLOAD_KEY_PREFIX]?.trim() || DEFAULT_PAYLOAD_KEY_PREFIX;
    found.set(`${bucketName}\u0000${keyPrefix}`, { bucketName, keyPrefix });
  }
  return [...found.values()];
}

type Outcome = { readonly data: unknown } | { readonly unread: string; readonly final: boolean };

/**
 * Gives each offloaded event of a read its data (see the module comment); inline events are returned as they are.
 * `reader` undefined: verify has no S3 client, and an offloaded event says so.
 */
export function offloadedDataResolver(reader: PayloadReader | undefined, locations: readonly PayloadLocation[]): <T extends OffloadableEvent>(item: T) => Promise<T> {
  const known = new Map<string, Outcome>();
  const read = async (envelope: EventEnvelope<unknown>): Promise<Outcome> => {
    if (reader === undefined) return { unread: 'verify has no S3 client to read it with', final: true };
    const location = parseDataRef(envelope.dataref ?? '');
    const expected = locations.find((candidate) => location !== undefined && location.bucketName === candidate.bucketName && location.key.startsWith(candidate.keyPrefix)) ?? locations[0];
    if (expected === undefined) return { unread: `${envelope.dataref ?? ''} is not in a payload bucket any consumer of the flow reads (none has ${CLAIM_CHECK_ENV.PAYLOAD_BUCKET_NAME}): verify does not follow it`, final: true };
    try {
      return { data: (await resolvePayload(envelope, reader, expected)).envelope.data };
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      if (error instanceof PayloadUnavailableError) return { unread: message, final: true };
      return {
        unread: `verify could not read ${envelope.dataref ?? ''}: ${message} (when S3 refused it: verify's role needs s3:GetObject on the payload prefix and kms:Decrypt on the flow's key, docs/DEPLOYING.md)`,
        final: false,
      };
    }
  };
  return async (item) => {
    if (item.event.data !== undefined) return item;
    const envelope = envelopeObjectOf(item.body) as EventEnvelope<unknown> | undefined;
    if (envelope === undefined || !isOffloaded(envelope)) return item;
    let outcome = known.get(item.event.id);
    if (outcome === undefined) {
      outcome = await read(envelope);
      if (!('final' in outcome) || outcome.final) known.set(item.event.id, outcome);
    }
    return 'data' in outcome ? { ...item, event: { ...item.event, data: outcome.data } } : { ...item, dataUnread: outcome.unread };
  };
}

/** The `dataref` of each offloaded event among `items` (`s3://<bucket>/<key>`, from its envelope as committed), each once. */
export function dataRefsOf(items: Iterable<Pick<OffloadableEvent, 'body'>>): string[] {
  const found = new Set<string>();
  for (const item of items) {
    const dataref = envelopeObjectOf(item.body)?.[CLAIM_CHECK_ATTRIBUTES.DATAREF];
    if (typeof dataref === 'string' && dataref !== '') found.add(dataref);
  }
  return [...found];
}
