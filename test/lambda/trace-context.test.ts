import { describe, expect, test } from 'vitest';
import { parseEnvelope } from '../../lambda/envelope';
import { ConsumerMetrics } from '../../lambda/metrics';
import { CONSUMER_METRICS } from '../../lambda/contract/metric-names';
import { currentTraceContext, openTelemetryTraceContext } from '../../lambda/producer/current-trace-context';
import { buildEnvelope } from '../../lambda/producer/new-event';
import { traceContextOf, traceLogFields, traceparentFromXRayHeader } from '../../lambda/trace-context';

const TRACEPARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
const defaults = { source: 'test', now: () => new Date('2024-05-01T12:00:00.000Z'), newId: () => 'evt-1' };

describe('trace context in the envelope', () => {
  test('the producer copies the event\'s traceparent and tracestate onto the envelope, and the consumer reads them back', () => {
    const envelope = buildEnvelope({ type: 'OrderPlaced', data: {}, traceparent: TRACEPARENT, tracestate: 'rojo=00f067aa0ba902b7' }, defaults);

    expect(envelope).toMatchObject({ traceparent: TRACEPARENT, tracestate: 'rojo=00f067aa0ba902b7' });
    expect(parseEnvelope(JSON.stringify(envelope))).toMatchObject({ traceparent: TRACEPARENT, tracestate: 'rojo=00f067aa0ba902b7' });
  });

  test('without a trace of its own, the producer uses the Lambda invocation\'s X-Ray trace', () => {
    const context = currentTraceContext({}, { _X_AMZN_TRACE_ID: 'Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1' });
    expect(context).toEqual({ traceparent: '00-5759e988bd862e3fe1be46a994272793-53995c3f42cd8ad8-01' });
  });

  test('no trace anywhere: no trace fields on the envelope', () => {
    expect(currentTraceContext({}, {})).toEqual({});
    expect(buildEnvelope({ type: 'OrderPlaced', data: {} }, defaults)).not.toHaveProperty('traceparent');
  });

  test('an active OpenTelemetry span is read through the API\'s global registry', () => {
    const span = { spanContext: () => ({ traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7', traceFlags: 1, traceState: { serialize: () => 'congo=t61rcWkgMzE' } }) };
    const registry = { context: { active: () => ({ getValue: (key: symbol) => (key === Symbol.for('OpenTelemetry Context Key SPAN') ? span : undefined) }) } };
    expect(openTelemetryTraceContext(registry)).toEqual({ traceparent: TRACEPARENT, tracestate: 'congo=t61rcWkgMzE' });
    expect(openTelemetryTraceContext(undefined)).toEqual({});
  });

  test('a malformed traceparent is dropped (with its tracestate) and never fails the event', () => {
    expect(traceContextOf({ traceparent: '00-00000000000000000000000000000000-00f067aa0ba902b7-01', tracestate: 'a=b' })).toEqual({});
    expect(traceContextOf({ traceparent: 'not a traceparent' })).toEqual({});
    const body = JSON.stringify({ specversion: '1.0', id: 'e', source: 's', type: 't', data: {}, traceparent: 42 });
    expect(parseEnvelope(body)).not.toHaveProperty('traceparent');
    expect(traceparentFromXRayHeader('Root=1-5759e988-bd862e3fe1be46a994272793')).toBeUndefined();
  });

  test('consumer log fields and metric lines carry the trace id', () => {
    expect(traceLogFields({ traceparent: TRACEPARENT })).toEqual({ traceId: '4bf92f3577b34da6a3ce929d0e0e4736', traceparent: TRACEPARENT });
    const lines: Array<Record<string, unknown>> = [];
    const metrics = new ConsumerMetrics({ subscriberName: 'billing', processingMode: 'transactional', sink: (line) => lines.push(JSON.parse(line) as Record<string, unknown>) });
    metrics.count('processed', { envelope: { traceparent: TRACEPARENT } });
    metrics.flush();
    expect(lines[0]?.[CONSUMER_METRICS.TRACE_IDS_PROPERTY]).toEqual(['4bf92f3577b34da6a3ce929d0e0e4736']);
  });
});
