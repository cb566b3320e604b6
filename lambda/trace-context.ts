/**
 * Trace context carried in the envelope: the CloudEvents distributed-tracing extension (`traceparent`, `tracestate`,
 * W3C Trace Context format). X-Ray does not follow an event through a DynamoDB stream and a pipe, so the producer puts
 * the trace it runs in on the event, and every consumer's log lines and metrics carry it. Pure: imports no AWS SDK.
 */

/** The trace context of an event (both CloudEvents extension attributes are optional). */
export interface TraceContext {
  /** W3C `traceparent`: `00-<32 hex trace id>-<16 hex parent id>-<2 hex flags>`. */
  readonly traceparent?: string;
  /** W3C `tracestate`: vendor entries, e.g. `rojo=00f067aa0ba902b7`; only with a `traceparent`. */
  readonly tracestate?: string;
}

/** A version-00 `traceparent` whose trace id and parent id are not all zeros (W3C Trace Context, section 3.2). */
const TRACEPARENT = /^00-(?!0{32})([0-9a-f]{32})-(?!0{16})([0-9a-f]{16})-([0-9a-f]{2})$/;

/** Longest `tracestate` kept: 32 list members of at most 256 characters, with commas (W3C Trace Context, 3.3.1). */
export const MAX_TRACESTATE_CHARACTERS = 32 * 257;

/** The trace id of a valid `traceparent`, else undefined. */
export function traceIdOf(traceparent: string | undefined): string | undefined {
  return traceparent === undefined ? undefined : TRACEPARENT.exec(traceparent)?.[1];
}

/**
 * The trace context of an object with `traceparent`/`tracestate` (an envelope as parsed, or a producer's event): a
 * malformed `traceparent` is dropped with its `tracestate` (a broken trace must never stop an event), and a
 * `tracestate` is kept only beside a valid `traceparent` and within {@link MAX_TRACESTATE_CHARACTERS}.
 */
export function traceContextOf(value: { readonly traceparent?: unknown; readonly tracestate?: unknown }): TraceContext {
  const traceparent = typeof value.traceparent === 'string' ? value.traceparent.trim().toLowerCase() : undefined;
  if (traceIdOf(traceparent) === undefined) return {};
  const tracestate = typeof value.tracestate === 'string' ? value.tracestate.trim() : '';
  return tracestate === '' || tracestate.length > MAX_TRACESTATE_CHARACTERS ? { traceparent } : { traceparent, tracestate };
}

/**
 * The X-Ray trace header Lambda sets for an invocation (`Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1`)
 * as a W3C `traceparent`: the X-Ray trace id is the W3C trace id with its `1-` version and the hyphen removed
 * (X-Ray developer guide, "Tracing header"). Undefined when the header has no root or parent.
 */
export function traceparentFromXRayHeader(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  const fields = new Map(header.split(';').map((part) => part.trim().split('=') as [string, string | undefined]));
  const root = /^1-([0-9a-f]{8})-([0-9a-f]{24})$/i.exec(fields.get('Root') ?? '');
  const parent = fields.get('Parent');
  if (root === null || parent === undefined || !/^[0-9a-f]{16}$/i.test(parent)) return undefined;
  const traceparent = `00-${root[1]}${root[2]}-${parent}-${fields.get('Sampled') === '1' ? '01' : '00'}`.toLowerCase();
  return traceIdOf(traceparent) === undefined ? undefined : traceparent;
}

/** Log fields of an event's trace context (`traceId`, `traceparent`, `tracestate`): none when it has none. */
export function traceLogFields(context: TraceContext): Readonly<Record<string, string>> {
  const traceId = traceIdOf(context.traceparent);
  if (traceId === undefined) return {};
  return { traceId, traceparent: context.traceparent as string, ...(context.tracestate !== undefined ? { tracestate: context.tracestate } : {}) };
}
