import { describe, expect, it } from 'vitest';
import { deterministicUuid, eventIdOf, IdSequence } from '../../../simulator/aws/message-ids';
import { md5OfBody, md5OfMessageAttributes } from '../../../simulator/aws/sqs-md5';

const binary = (text: string): string => Buffer.from(text).toString('base64');

describe('md5OfMessageAttributes', () => {
  // digests published for SQS's documented algorithm (npm package aws-md5-of-message-attributes, whose values SQS returns)
  it('matches the published digests of String, custom Number and Binary attributes, alone and together', () => {
    const text = { DataType: 'String', StringValue: 'attribValue 1' };
    const number = { DataType: 'Number.float', StringValue: '4563442423554324324264524243.32543234' };
    const bytes = { DataType: 'Binary', BinaryValue: binary('Hello binary world!') };
    expect(md5OfMessageAttributes({ attribName1: text })).toBe('19e27d4e946b072f3f58da80d94fd778');
    expect(md5OfMessageAttributes({ customNumberTypeAttrib: number })).toBe('9fe1b90bbd9965bdf77bac517c7d2495');
    expect(md5OfMessageAttributes({ binaryAttribute: bytes })).toBe('31a92b15d92f8db860eda32aceb656c3');
    expect(md5OfMessageAttributes({ attribName1: text, customNumberTypeAttrib: number, binaryAttribute: bytes })).toBe('c932db14a896c663f83c260297d594ff');
  });

  it('is undefined without attributes and refuses an unknown data type', () => {
    expect(md5OfMessageAttributes(undefined)).toBeUndefined();
    expect(md5OfMessageAttributes({})).toBeUndefined();
    expect(() => md5OfMessageAttributes({ a: { DataType: 'Date', StringValue: 'x' } })).toThrow(/message attribute 'a' has data type 'Date'/);
  });

  it('digests the UTF-8 bytes of a body', () => {
    expect(md5OfBody('')).toBe('d41d8cd98f00b204e9800998ecf8427e');
    expect(md5OfBody('héllo')).toBe('be50e8478cf24ff3595bc7307fb91b50');
  });
});

describe('message ids', () => {
  it('are UUID-shaped and depend only on the namespace and the sequence number', () => {
    expect(deterministicUuid('q', 1)).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(deterministicUuid('q', 1)).toBe(deterministicUuid('q', 1));
    expect(deterministicUuid('q', 1)).not.toBe(deterministicUuid('q', 2));
    expect(deterministicUuid('q', 1)).not.toBe(deterministicUuid('r', 1));
    const sequence = new IdSequence('q');
    expect([sequence.next(), sequence.next()]).toEqual([deterministicUuid('q', 1), deterministicUuid('q', 2)]);
  });
});

describe('eventIdOf', () => {
  it('reads the id of an envelope body, or of the Message of an SNS notification', () => {
    expect(eventIdOf('{"id":"e1","type":"t"}')).toBe('e1');
    expect(eventIdOf(JSON.stringify({ Type: 'Notification', MessageId: 'm', Message: '{"id":"e2"}' }))).toBe('e2');
  });

  it('is undefined for anything else', () => {
    for (const body of ['plain text', '{"id":1}', '[{"id":"e1"}]', '{not json', JSON.stringify({ Type: 'Notification', Message: 'hello' })]) {
      expect(eventIdOf(body)).toBeUndefined();
    }
  });
});
