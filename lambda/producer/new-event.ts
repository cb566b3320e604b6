/** What a producer passes to append an event, and how it becomes an {@link EventEnvelope}. */
import { CLOUDEVENTS_SPEC_VERSION, EventEnvelope, JSON_CONTENT_TYPE } from '../envelope';
import { InvalidEventError } from '../errors';
import { unpairedSurrogate } from '../unicode';
import type { TraceContext } from '../trace-context';
import { currentTraceContext } from './current-trace-context';

/**
 * An event to append to the outbox. `traceparent`/`tracestate` set its trace context.
 * @default trace context: the active OpenTelemetry span's, else the Lambda invocation's X-Ray trace, else none
 */
export interface NewEvent<TData = unknown> extends TraceContext {
  /** What happened, e.g. `OrderPlaced`; consumers filter and dispatch on it. */
  readonly type: string;
  /** The payload; must survive `JSON.stringify` (no `undefined`, functions, BigInt or cycles at the top). */
  readonly data: TData;
  /** The aggregate the event is about, e.g. the order id. @default no subject */
  readonly subject?: string;
  /**
   * The event id. Choose it (e.g. derived from the request id) to make a retried producer idempotent: the outbox
   * Put is conditional, so a second transaction with the same id is cancelled instead of writing a second event.
   * @default a random UUID from a producer's `Outbox`; for an event a consumer emits (`tx.emit`, or returned by an
   *   aggregate's `apply`), an id derived from the subscriber, the consumed event's id and the event's position, so a
   *   re-run of the same message names it the same
   */
  readonly id?: string;
  /** The CloudEvents `source`. @default the producer's configured event source */
  readonly source?: string;
  /** When it happened. @default now */
  readonly time?: Date;
}

/** Defaults applied by {@link buildEnvelope}. */
export interface EnvelopeDefaults {
  readonly source: string;
  readonly now: () => Date;
  readonly newId: () => string;
}

/** A non-empty, well-formed Unicode string (the id becomes a DynamoDB key; see unicode.ts), or an {@link InvalidEventError}. */
function nonEmpty(value: unknown, field: string): string {
  if (typeof value !== 'string' || value === '') {
    throw new InvalidEventError(`event ${field} must be a non-empty string, but was ${value === '' ? 'empty' : typeof value}`);
  }
  const problem = unpairedSurrogate(value);
  if (problem !== undefined) throw new InvalidEventError(`event ${field} must be well-formed Unicode, but has ${problem}`);
  return value;
}

/**
 * The path of the first Map or Set in `value` (`data.lines`, `data[0]`), or undefined. JSON.stringify writes both as
 * `{}`, so an event carrying one would be stored without its contents and nobody told.
 */
function lossyCollectionPath(value: unknown, path: string, seen: Set<object>): { path: string; kind: 'Map' | 'Set' } | undefined {
  if (value === null || typeof value !== 'object' || seen.has(value)) return undefined;
  if (value instanceof Map) return { path, kind: 'Map' };
  if (value instanceof Set) return { path, kind: 'Set' };
  if (typeof (value as { toJSON?: unknown }).toJSON === 'function') return undefined; // it says how it is written
  seen.add(value);
  if (Array.isArray(value)) {
    for (const [index, item] of value.entries()) {
      const found = lossyCollectionPath(item, `${path}[${index}]`, seen);
      if (found !== undefined) return found;
    }
    return undefined;
  }
  for (const [name, item] of Object.entries(value)) {
    const found = lossyCollectionPath(item, /^[A-Za-z_$][\w$]*$/.test(name) ? `${path}.${name}` : `${path}[${JSON.stringify(name)}]`, seen);
    if (found !== undefined) return found;
  }
  return undefined;
}

/** Serializes `data` once, failing with a clear message when JSON cannot carry it (or would silently drop a Map's or Set's contents). */
function assertSerializable(data: unknown, type: string): void {
  const lossy = lossyCollectionPath(data, 'data', new Set());
  if (lossy !== undefined) {
    const convert = lossy.kind === 'Map' ? 'Object.fromEntries(map)' : 'Array.from(set)';
    throw new InvalidEventError(`event '${type}' data holds a ${lossy.kind} at ${lossy.path}, which JSON writes as {}: convert it before emitting (e.g. ${convert})`);
  }
  let json: string | undefined;
  try {
    json = JSON.stringify(data);
  } catch (error) {
    throw new InvalidEventError(`event '${type}' data cannot be serialized to JSON: ${(error as Error).message}`, { cause: error });
  }
  if (json === undefined) {
    throw new InvalidEventError(`event '${type}' data must be a JSON value, but was ${typeof data}`);
  }
}

/**
 * How far ahead of the producer's clock an event's `time` may be: 5 minutes, for clocks of different hosts. An event
 * dated later would look younger than it is to every rule that measures an event's age (the operator commands' check
 * against a subscriber's deduplication window, the end-to-end latency metric).
 */
export const MAX_EVENT_TIME_AHEAD_MILLISECONDS = 5 * 60 * 1000;

/** Builds the CloudEvents envelope of a new event, applying the defaults and validating every field. */
export function buildEnvelope<TData>(event: NewEvent<TData>, defaults: EnvelopeDefaults): EventEnvelope<TData> {
  const type = nonEmpty(event.type, 'type');
  const id = nonEmpty(event.id ?? defaults.newId(), 'id');
  const source = nonEmpty(event.source ?? defaults.source, 'source');
  if (event.subject !== undefined) nonEmpty(event.subject, 'subject');
  const now = defaults.now();
  const time = event.time ?? now;
  if (!(time instanceof Date) || Number.isNaN(time.getTime())) {
    throw new InvalidEventError(`event '${type}' time must be a valid Date`);
  }
  if (time.getTime() > now.getTime() + MAX_EVENT_TIME_AHEAD_MILLISECONDS) {
    throw new InvalidEventError(
      `event '${type}' time must be at most ${MAX_EVENT_TIME_AHEAD_MILLISECONDS / 60_000} minutes ahead of the producer's clock (${now.toISOString()}), ` +
        `but ${time.toISOString()} was given`,
    );
  }
  assertSerializable(event.data, type);
  return {
    specversion: CLOUDEVENTS_SPEC_VERSION,
    id,
    source,
    type,
    ...(event.subject !== undefined ? { subject: event.subject } : {}),
    time: time.toISOString(),
    datacontenttype: JSON_CONTENT_TYPE,
    data: event.data,
    ...currentTraceContext(event),
  };
}
