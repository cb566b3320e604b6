/**
 * The producer side of the claim-check (contract/claim-check.ts): an event too large to travel inline has its `data`
 * written to S3, under a key derived from its id and the data's SHA-256, BEFORE the outbox transaction; its envelope
 * then carries the reference, the digest, the size and the event's payload fingerprint instead of the data.
 */
import { createHash } from 'node:crypto';
import {
  CLAIM_CHECK_ATTRIBUTES,
  MAX_OFFLOADED_DATA_BYTES,
  payloadDataRef,
  payloadObjectKey,
  shouldOffload,
} from '../contract/claim-check';
import { MAX_MESSAGE_BYTES } from '../contract/wire-format';
import type { EventEnvelope } from '../envelope';
import { EventTooLargeError } from '../errors';
import { payloadFingerprint } from '../fingerprint';
import type { ClaimCheckConfig } from './claim-check-config';
import type { PayloadWriter } from './payload-store';

/** What a producer offloads with. */
export interface ClaimCheck {
  readonly config: ClaimCheckConfig;
  readonly store: PayloadWriter;
}

/** The bytes a delivered envelope takes, as the producer's size check measures it: the JSON written as a JSON string. */
export function encodedEnvelopeBytes(envelope: EventEnvelope): number {
  return Buffer.byteLength(JSON.stringify(JSON.stringify(envelope)), 'utf8');
}

/** The inline threshold in force: the configured one, else the event size limit. */
export function inlineThreshold(config: ClaimCheckConfig, maxEventBytes: number | undefined): number {
  const limit = maxEventBytes ?? MAX_MESSAGE_BYTES;
  return config.inlineThresholdBytes === undefined ? limit : Math.min(config.inlineThresholdBytes, limit);
}

/** True when `envelope` is offloaded under `config` (and `maxEventBytes`, the producer's event size limit). */
export function needsOffload(envelope: EventEnvelope, config: ClaimCheckConfig, maxEventBytes: number | undefined): boolean {
  return shouldOffload(encodedEnvelopeBytes(envelope), inlineThreshold(config, maxEventBytes));
}

/** Lowercase hex SHA-256 of a string's UTF-8 bytes or of bytes. */
export function sha256Hex(value: string | Uint8Array): string {
  return createHash('sha256').update(value).digest('hex');
}

/** The object key of an event's data written at `writtenAt` (contract/claim-check.ts, `payloadObjectKey`). */
export function objectKeyOf(config: ClaimCheckConfig, eventId: string, dataSha256: string, writtenAt: Date): string {
  return payloadObjectKey(config.keyPrefix, sha256Hex(eventId), dataSha256, writtenAt);
}

/**
 * The envelope as it goes into the outbox: `envelope` itself when it travels inline, else, once its data is in S3
 * (written now, or there already from an earlier try of the same event on the same UTC day), the envelope without
 * `data` and with `dataref`, `iefdatasha256`, `iefdatasize` and `ieffingerprint`. `now` is the producer's clock: the key names its UTC
 * day, so the object a committed event refers to was created on the day of the commit and S3's lifecycle rule keeps
 * it at least its days from then (R7-1: an object an earlier day's try wrote is never reused).
 *
 * @throws EventTooLargeError when the data is larger than {@link MAX_OFFLOADED_DATA_BYTES}
 * @throws the S3 client's error when the write fails (nothing is in the outbox yet: the caller may retry)
 */
export async function offloadIfLarge<TData>(
  envelope: EventEnvelope<TData>,
  claimCheck: ClaimCheck,
  maxEventBytes: number | undefined,
  now: Date = new Date(),
): Promise<EventEnvelope<TData>> {
  if (!needsOffload(envelope, claimCheck.config, maxEventBytes)) return envelope;
  const body = Buffer.from(JSON.stringify(envelope.data) ?? 'null', 'utf8');
  if (body.byteLength > MAX_OFFLOADED_DATA_BYTES) {
    throw new EventTooLargeError(
      `event '${envelope.id}' (${envelope.type}) is too large: its data is ${body.byteLength.toLocaleString('en-US')} bytes, but at most ` +
        `${MAX_OFFLOADED_DATA_BYTES.toLocaleString('en-US')} bytes (64 MiB) are offloaded to S3, so that a consumer can hold it in memory`,
      { eventId: envelope.id, sizeBytes: body.byteLength, limitBytes: MAX_OFFLOADED_DATA_BYTES },
    );
  }
  const digest = createHash('sha256').update(body);
  const sha256 = digest.copy().digest('hex');
  const key = objectKeyOf(claimCheck.config, envelope.id, sha256, now);
  await claimCheck.store.putOnce(claimCheck.config.bucketName, key, body, digest.digest('base64'));
  const { data: _data, ...rest } = envelope;
  return {
    ...rest,
    [CLAIM_CHECK_ATTRIBUTES.DATAREF]: payloadDataRef(claimCheck.config.bucketName, key),
    [CLAIM_CHECK_ATTRIBUTES.SHA256]: sha256,
    [CLAIM_CHECK_ATTRIBUTES.SIZE]: body.byteLength,
    // the fingerprint the event has inline: the same event is the same whatever its form and key order (R8b-6)
    [CLAIM_CHECK_ATTRIBUTES.FINGERPRINT]: payloadFingerprint(envelope),
  } as EventEnvelope<TData>;
}
