/**
 * The reader side of the claim-check (contract/claim-check.ts): fetch an offloaded event's data, verify its size and
 * SHA-256 against the envelope, and give back the event as if it had travelled inline. Used by the consumer runtime
 * before any handler runs, and by the operator commands on request.
 */
import { createHash } from 'node:crypto';
import { parseDataRef } from '../contract/claim-check';
import type { EventEnvelope } from '../envelope';
import { PayloadUnavailableError } from '../errors';
import { payloadFingerprint } from '../fingerprint';
import type { ClaimCheckConfig } from './claim-check-config';
import type { PayloadReader } from './payload-store';

/** An offloaded event made whole: the inline-looking envelope and the data's JSON text (to parse fresh copies from). */
export interface ResolvedPayload<TData = unknown> {
  readonly envelope: EventEnvelope<TData>;
  readonly dataJson: string;
}

/** True when the envelope's data is in S3 (it has a `dataref`). */
export function isOffloaded(envelope: EventEnvelope<unknown>): boolean {
  return envelope.dataref !== undefined;
}

/** The errors {@link resolvePayload} threw because the object is not there (not for an altered or refused one). */
const missingObjectErrors = new WeakSet<object>();

/**
 * True when `error` is {@link resolvePayload}'s refusal of an offloaded event whose object is not there (expired,
 * deleted, never written): the one case where the consumer looks up whether the event was applied before it
 * dead-letters the message (process-message.ts).
 */
export function isMissingObject(error: unknown): boolean {
  return typeof error === 'object' && error !== null && missingObjectErrors.has(error);
}

/** The envelope without the claim-check attributes, with `data` set. */
export function withData<TData>(envelope: EventEnvelope<unknown>, data: TData): EventEnvelope<TData> {
  const { dataref: _ref, iefdatasha256: _sha, iefdatasize: _size, ieffingerprint: _fingerprint, data: _data, ...rest } = envelope;
  return { ...rest, data } as EventEnvelope<TData>;
}

/**
 * Fetches and verifies an offloaded event's data. `expected`, when given, is this flow's bucket and prefix: a
 * reference elsewhere is refused (a reader follows only the references its flow writes).
 *
 * @throws PayloadUnavailableError (permanent) when the reference is not this flow's, the object is missing, or its
 *   size, SHA-256, JSON or fingerprint (`ieffingerprint`, when the envelope has one) do not match the envelope
 * @throws the S3 client's error when the read itself fails (throttling, network, permissions): retryable
 */
export async function resolvePayload<TData = unknown>(
  envelope: EventEnvelope<unknown>,
  reader: PayloadReader,
  expected?: Pick<ClaimCheckConfig, 'bucketName' | 'keyPrefix'>,
): Promise<ResolvedPayload<TData>> {
  const { dataref, iefdatasha256, iefdatasize } = envelope;
  const what = `event '${envelope.id}' (${envelope.type})`;
  const location = dataref === undefined ? undefined : parseDataRef(dataref);
  if (dataref === undefined || location === undefined || iefdatasha256 === undefined || iefdatasize === undefined) {
    throw new PayloadUnavailableError(`${what} has no valid claim-check reference (dataref, iefdatasha256, iefdatasize)`, dataref);
  }
  if (expected !== undefined && (location.bucketName !== expected.bucketName || !location.key.startsWith(expected.keyPrefix))) {
    throw new PayloadUnavailableError(
      `${what} refers to ${dataref}, outside this flow's payload bucket and prefix (s3://${expected.bucketName}/${expected.keyPrefix}); it is not read`,
      dataref,
    );
  }
  const bytes = await reader.get(location.bucketName, location.key);
  if (bytes === undefined) {
    const missing = new PayloadUnavailableError(
      `offloaded data missing, no retry can bring it back (expired by the bucket's lifecycle rule, deleted, or never written): ${what}, ${dataref}`,
      dataref,
    );
    missingObjectErrors.add(missing);
    throw missing;
  }
  if (bytes.byteLength !== iefdatasize) {
    throw new PayloadUnavailableError(
      `offloaded data altered after the event was written: its size ${bytes.byteLength} differs from iefdatasize ${iefdatasize}: ${what}, ${dataref}`,
      dataref,
    );
  }
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  if (sha256 !== iefdatasha256) {
    throw new PayloadUnavailableError(
      `offloaded data altered after the event was written: its SHA-256 differs from iefdatasha256: ${what}, ${dataref} has SHA-256 ${sha256}, the envelope says ${iefdatasha256}`,
      dataref,
    );
  }
  const dataJson = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
  let data: unknown;
  try {
    data = JSON.parse(dataJson);
  } catch {
    throw new PayloadUnavailableError(`${what}: its data object ${dataref} matches its digest but is not JSON`, dataref);
  }
  // the fingerprint the consumer keeps for this event (R8b-6) must be the data's: checked once the data is here
  const whole = withData(envelope, data as TData);
  if (envelope.ieffingerprint !== undefined && payloadFingerprint(whole) !== envelope.ieffingerprint) {
    throw new PayloadUnavailableError(
      `offloaded data does not match the event's fingerprint: ${what}, ${dataref}: ieffingerprint ${envelope.ieffingerprint}, its type, subject and data give ${payloadFingerprint(whole)}`,
      dataref,
    );
  }
  return { envelope: whole, dataJson };
}
