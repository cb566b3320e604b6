import { describe, expect, test } from 'vitest';
import { parseEnvelope } from '../../lambda/envelope';
import { MalformedEnvelopeError } from '../../lambda/errors';
import { envelopeObject } from './helpers';

const valid = envelopeObject({ id: 'evt-1' });

describe('parseEnvelope accepts', () => {
  test('the envelope JSON object', () => {
    expect(parseEnvelope(JSON.stringify(valid))).toEqual(valid);
  });

  test('the envelope as a JSON string (double-encoded by the relay)', () => {
    expect(parseEnvelope(JSON.stringify(JSON.stringify(valid)))).toEqual(valid);
  });

  test('an SNS notification wrapper (raw delivery off)', () => {
    const body = JSON.stringify({ Type: 'Notification', MessageId: 'sns-1', TopicArn: 'arn:aws:sns:eu-west-1:1:t', Message: JSON.stringify(valid) });
    expect(parseEnvelope(body)).toEqual(valid);
  });

  test('an SNS notification wrapping a double-encoded envelope', () => {
    const body = JSON.stringify({ Type: 'Notification', Message: JSON.stringify(JSON.stringify(valid)) });
    expect(parseEnvelope(body)).toEqual(valid);
  });

  test('null data, no subject, no datacontenttype (CloudEvents JSON default), and drops unknown extension fields', () => {
    const { subject: _subject, datacontenttype: _contentType, ...rest } = envelopeObject({ id: 'evt-2', data: null });
    const parsed = parseEnvelope(JSON.stringify({ ...rest, traceparent: '00-abc' }));
    expect(parsed).toEqual({ ...rest, datacontenttype: 'application/json' });
    expect('subject' in parsed).toBe(false);
  });

  test('a time with a numeric offset', () => {
    expect(parseEnvelope(JSON.stringify({ ...valid, time: '2024-05-01T14:00:00+02:00' })).time).toBe('2024-05-01T14:00:00+02:00');
  });

  test('no time (optional in CloudEvents 1.0): the envelope has none either', () => {
    const { time: _time, ...rest } = valid;
    const parsed = parseEnvelope(JSON.stringify(rest));
    expect(parsed).toEqual(rest);
    expect('time' in parsed).toBe(false);
  });

  test('ids with whole emoji (surrogate pairs) and data nested exactly 64 levels deep', () => {
    const data = JSON.parse(`${'['.repeat(63)}${']'.repeat(63)}`) as unknown;
    expect(parseEnvelope(JSON.stringify({ ...valid, id: 'order-1-😀', data })).id).toBe('order-1-😀');
  });
});

describe('parseEnvelope fails with a precise reason', () => {
  const { id: _id, ...withoutId } = valid;
  const { data: _data, ...withoutData } = valid;
  const { specversion: _specversion, ...withoutSpecversion } = valid;
  const cases: Array<[string, string, RegExp]> = [
    ['a body that is not JSON', '{"id": ', /message body is not valid JSON/],
    ['a JSON array', '[1,2]', /the envelope must be a JSON object, but was an array/],
    ['a JSON number', '42', /the envelope must be a JSON object, but was a number/],
    ['JSON null', 'null', /the envelope must be a JSON object, but was null/],
    ['a JSON string that is not JSON inside', JSON.stringify('hello'), /the JSON string in the message body is not valid JSON/],
    ['an SNS notification whose Message is not JSON', JSON.stringify({ Type: 'Notification', Message: 'plain text' }), /the SNS notification's Message is not valid JSON/],
    ['a missing specversion', JSON.stringify(withoutSpecversion), /field 'specversion' must be '1.0', but was missing/],
    ['another specversion', JSON.stringify({ ...valid, specversion: '0.3' }), /field 'specversion' must be '1.0', but was "0.3"/],
    ['a missing id', JSON.stringify(withoutId), /field 'id' must be a non-empty string, but was missing/],
    ['a numeric id', JSON.stringify({ ...valid, id: 7 }), /field 'id' must be a non-empty string, but was a number/],
    ['an empty source', JSON.stringify({ ...valid, source: '' }), /field 'source' must be a non-empty string, but was an empty string/],
    ['a type that is an object', JSON.stringify({ ...valid, type: {} }), /field 'type' must be a non-empty string, but was an object/],
    ['an empty time', JSON.stringify({ ...valid, time: '' }), /field 'time' must be a non-empty string, but was an empty string/],
    ['an id cut in the middle of an emoji', JSON.stringify({ ...valid, id: 'order-1-😀'.slice(0, -1) }), /field 'id' must be well-formed Unicode, but has an unpaired UTF-16 surrogate \(U\+D83D at index 8\)/],
    ['a source with a lone low surrogate', JSON.stringify({ ...valid, source: 'svc\udfff' }), /field 'source' must be well-formed Unicode/],
    ['a subject with a lone surrogate', JSON.stringify({ ...valid, subject: '\ud800' }), /field 'subject' must be well-formed Unicode/],
    ['data nested 65 levels deep', JSON.stringify({ ...valid, data: JSON.parse(`${'['.repeat(64)}${']'.repeat(64)}`) }), /the envelope is nested more than 64 levels deep/],
    ['a time that is not RFC 3339', JSON.stringify({ ...valid, time: '01/05/2024 12:00' }), /field 'time' must be an RFC 3339 timestamp .* but was '01\/05\/2024 12:00'/],
    ['an impossible date', JSON.stringify({ ...valid, time: '2024-13-45T12:00:00Z' }), /field 'time' must be an RFC 3339 timestamp/],
    ['a non-string subject', JSON.stringify({ ...valid, subject: 5 }), /field 'subject' must be a non-empty string when present, but was a number/],
    ['another content type', JSON.stringify({ ...valid, datacontenttype: 'text/xml' }), /field 'datacontenttype' must be 'application\/json', but was "text\/xml"/],
    ['missing data', JSON.stringify(withoutData), /field 'data' is missing/],
  ];
  test.each(cases)('fails on %s', (_name, body, reason) => {
    let thrown: unknown;
    try {
      parseEnvelope(body);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(MalformedEnvelopeError);
    expect((thrown as MalformedEnvelopeError).name).toBe('MalformedEnvelopeError');
    expect((thrown as MalformedEnvelopeError).reason).toMatch(reason);
    expect((thrown as Error).message).toMatch(/^malformed event envelope: /);
  });
});
