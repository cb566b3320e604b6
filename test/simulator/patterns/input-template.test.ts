import { describe, expect, it } from 'vitest';
import { compileInputTemplate, InputTemplateError, renderInputTemplate, type PipeReservedVariables } from '../../../operator/patterns/input-template';
import { outboxInputTemplate } from '../../../lambda/contract/wire-format';

const envelope = { specversion: '1.0', id: 'e1', source: 'orders', type: 'OrderPlaced', data: { note: 'say "hi"\n' } };

const outboxRecord = {
  eventID: 'x',
  eventName: 'INSERT',
  dynamodb: {
    NewImage: {
      pk: { S: 'OUTBOX#e1' },
      iefRecordType: { S: 'OutboxEvent.v1' },
      iefEnvelope: { S: JSON.stringify(envelope) },
    },
  },
};

const event = {
  detail: { id: 'i-1', state: 'RUNNING', count: 3, ok: true, nothing: null, tags: ['a', 'b'], obj: { k: 'v' }, quote: 'a"b' },
};

const reserved: PipeReservedVariables = {
  pipeName: 'example',
  pipeArn: 'arn:aws:pipes:us-east-1:123456789012:pipe/example',
  sourceArn: 'arn:aws:dynamodb:us-east-1:123456789012:table/t/stream/1',
  targetArn: 'arn:aws:sns:us-east-1:123456789012:topic',
  enrichmentArn: 'arn:aws:lambda:us-east-1:123456789012:function:enrich',
  eventIngestionTime: '2024-01-01T00:00:00.000Z',
};

describe('renderInputTemplate: the real outbox relay template', () => {
  it('delivers the envelope JSON itself (the string at the path, unquoted)', () => {
    const output = renderInputTemplate(outboxInputTemplate(), outboxRecord);
    expect(output).toBe(JSON.stringify(envelope));
    expect(JSON.parse(output)).toEqual(envelope);
  });

  it('is exactly the template synthesized into the example app', () => {
    expect(outboxInputTemplate()).toBe('<$.dynamodb.NewImage.iefEnvelope.S>');
  });
});

type Case = readonly [name: string, template: string | undefined, expected: string];

const cases: readonly Case[] = [
  ['no template: the event as JSON', undefined, JSON.stringify(event)],
  ['static text', 'Hello, sender', 'Hello, sender'],
  ['text: a string inserted as is', 'Hello, <$.detail.id>', 'Hello, i-1'],
  ['text: a number', 'count=<$.detail.count>', 'count=3'],
  ['text: a boolean and null', '<$.detail.ok>/<$.detail.nothing>', 'true/null'],
  ['text: an object without its quotes', 'Body is <$.detail.obj>', 'Body is {k:v}'],
  ['text: an array without its quotes', '<$.detail.tags>', '[a,b]'],
  ['text: a missing path renders nothing', 'x<$.detail.missing>y', 'xy'],
  ['text: a literal "<" that is not a placeholder', 'a < b <c>', 'a < b <c>'],
  ['text: the whole template a string placeholder', '<$.detail.quote>', 'a"b'],
  ['JSON: a string value gets quotes', '{"id": <$.detail.id>}', '{"id": "i-1"}'],
  ['JSON: quotes around a string variable are permitted', '{"id": "<$.detail.id>"}', '{"id": "i-1"}'],
  ['JSON: a string inside a longer string', '{"m": "id <$.detail.id>!"}', '{"m": "id i-1!"}'],
  ['JSON: strings are escaped', '{"q": <$.detail.quote>, "r": "<$.detail.quote>"}', '{"q": "a\\"b", "r": "a\\"b"}'],
  ['JSON: number, boolean, null values', '{"c": <$.detail.count>, "o": <$.detail.ok>, "n": <$.detail.nothing>}', '{"c": 3, "o": true, "n": null}'],
  ['JSON: object and array values', '{"o": <$.detail.obj>, "t": <$.detail.tags>}', '{"o": {"k":"v"}, "t": ["a","b"]}'],
  ['JSON: an object inside a string loses its quotes', '{"m": "body <$.detail.obj>"}', '{"m": "body {k:v}"}'],
  ['JSON: a missing path as a value is null', '{"m": <$.detail.missing>}', '{"m": null}'],
  ['JSON: a missing path inside a string is empty', '{"m": "[<$.detail.missing>]"}', '{"m": "[]"}'],
  ['JSON: an array template', '[<$.detail.id>, <$.detail.count>]', '["i-1", 3]'],
  ['JSON: an escaped quote does not end the string', '{"m": "a\\" <$.detail.id>"}', '{"m": "a\\" i-1"}'],
  ['JSON: bracket notation and indexes', '{"t": <$.detail.tags[1]>, "s": <$[\'detail\'].state>}', '{"t": "b", "s": "RUNNING"}'],
  ['reserved: pipe variables in JSON', '{"arn": <aws.pipes.pipe-arn>, "name": "<aws.pipes.pipe-name>"}', `{"arn": "${reserved.pipeArn}", "name": "example"}`],
  ['reserved: source, target, enrichment ARNs in text', '<aws.pipes.source-arn> <aws.pipes.target-arn> <aws.pipes.enrichment-arn>', `${reserved.sourceArn} ${reserved.targetArn} ${reserved.enrichmentArn}`],
  ['reserved: ingestion time', '{"d": <aws.pipes.event.ingestion-time>}', '{"d": "2024-01-01T00:00:00.000Z"}'],
  ['reserved: event.json as a JSON value', '{"original": <aws.pipes.event.json>}', `{"original": ${JSON.stringify(event)}}`],
  ['reserved: event.json as the whole template', '<aws.pipes.event.json>', JSON.stringify(event)],
  ['reserved: event as an escaped string value', '{"e": <aws.pipes.event>}', `{"e": ${JSON.stringify(JSON.stringify(event))}}`],
  ['reserved: event in text', 'event: <aws.pipes.event>', `event: ${JSON.stringify(event)}`],
];

describe('renderInputTemplate', () => {
  it.each(cases)('%s', (_name, template, expected) => {
    expect(renderInputTemplate(template, event, reserved)).toBe(expected);
  });

  it.each(cases.filter(([, template]) => template?.trim().startsWith('{') || template?.trim().startsWith('[')))('%s gives valid JSON', (_name, template) => {
    expect(() => JSON.parse(renderInputTemplate(template, event, reserved))).not.toThrow();
  });
});

type ErrorCase = readonly [name: string, template: string, messagePart: string];

const errorCases: readonly ErrorCase[] = [
  ['an unclosed placeholder', 'Hello <$.detail.id', 'not closed'],
  ['a placeholder interrupted by another', '<$.a <$.b>', 'not closed'],
  ['an unknown reserved variable', '<aws.pipes.rule-arn>', 'unknown reserved variable <aws.pipes.rule-arn>'],
  ['an unsupported JSONPath', '<$..id>', 'placeholder <$..id>'],
  ['a JSON template that is not JSON', '{"a": <$.detail.id>,}', 'not valid JSON'],
  ['a placeholder as an object key', '{<$.detail.id>: 1}', 'not valid JSON'],
  ['event.json inline in text', 'event: <aws.pipes.event.json>', 'only be used as the value of a JSON field'],
  ['event.json inside a JSON string', '{"e": "<aws.pipes.event.json>"}', 'only be used as the value of a JSON field'],
];

describe('renderInputTemplate: errors', () => {
  it.each(errorCases)('%s', (_name, template, messagePart) => {
    expect(() => renderInputTemplate(template, event, reserved)).toThrow(InputTemplateError);
    expect(() => renderInputTemplate(template, event, reserved)).toThrow(messagePart);
    expect(() => renderInputTemplate(template, event, reserved)).toThrow(JSON.stringify(template));
  });

  it('names a reserved variable that has no value', () => {
    expect(() => renderInputTemplate('{"d": <aws.pipes.event.ingestion-time>}', event)).toThrow('reserved variable <aws.pipes.event.ingestion-time> has no value: pass reserved.eventIngestionTime');
  });

  it('validates when compiled, before any event', () => {
    expect(() => compileInputTemplate('{"a": <$.x>')).toThrow(InputTemplateError);
  });
});
