/**
 * The trace context a producer puts on the events it appends: the event's own (`NewEvent.traceparent`), else the
 * active OpenTelemetry span's, else the Lambda invocation's X-Ray trace. No dependency: OpenTelemetry is read through
 * the global its API registers (`@opentelemetry/api` 1.x), X-Ray through the environment variable Lambda sets.
 */
import { traceContextOf, traceparentFromXRayHeader, type TraceContext } from '../trace-context';

/** Where `@opentelemetry/api` 1.x registers itself (`Symbol.for('opentelemetry.js.api.1')`). */
const OPENTELEMETRY_API_GLOBAL = Symbol.for('opentelemetry.js.api.1');
/** The context key of the active span (`createContextKey('OpenTelemetry Context Key SPAN')` is `Symbol.for` of it). */
const OPENTELEMETRY_SPAN_KEY = Symbol.for('OpenTelemetry Context Key SPAN');
/** The environment variable Lambda sets to the invocation's X-Ray trace header. */
export const XRAY_TRACE_HEADER_ENVIRONMENT_VARIABLE = '_X_AMZN_TRACE_ID';

interface SpanContextLike {
  readonly traceId?: unknown;
  readonly spanId?: unknown;
  readonly traceFlags?: unknown;
  readonly traceState?: { serialize?: () => unknown };
}

/** The active OpenTelemetry span's context as W3C fields, when an OpenTelemetry SDK is registered and a span is active. */
export function openTelemetryTraceContext(registry: unknown = (globalThis as Record<symbol, unknown>)[OPENTELEMETRY_API_GLOBAL]): TraceContext {
  try {
    const manager = (registry as { context?: { active?: () => { getValue?: (key: symbol) => unknown } } } | undefined)?.context;
    const span = manager?.active?.()?.getValue?.(OPENTELEMETRY_SPAN_KEY) as { spanContext?: () => SpanContextLike } | undefined;
    const spanContext = span?.spanContext?.();
    if (spanContext === undefined || typeof spanContext.traceId !== 'string' || typeof spanContext.spanId !== 'string') return {};
    const flags = typeof spanContext.traceFlags === 'number' ? spanContext.traceFlags & 0xff : 0;
    const tracestate = spanContext.traceState?.serialize?.();
    return traceContextOf({ traceparent: `00-${spanContext.traceId}-${spanContext.spanId}-${flags.toString(16).padStart(2, '0')}`, tracestate });
  } catch {
    return {}; // tracing must never stop an event
  }
}

/**
 * The trace context for a new event: its own, else OpenTelemetry's active span, else X-Ray's (see the module comment).
 * Where one execution environment runs several invocations at once (Lambda Managed Instances), the environment
 * variable may hold another invocation's trace: set `traceparent` on the event there.
 */
export function currentTraceContext(
  event: { readonly traceparent?: string; readonly tracestate?: string },
  env: Readonly<Record<string, string | undefined>> = process.env,
): TraceContext {
  const own = traceContextOf(event);
  if (own.traceparent !== undefined) return own;
  const openTelemetry = openTelemetryTraceContext();
  if (openTelemetry.traceparent !== undefined) return openTelemetry;
  const xray = traceparentFromXRayHeader(env[XRAY_TRACE_HEADER_ENVIRONMENT_VARIABLE]);
  return xray === undefined ? {} : { traceparent: xray };
}
