import { describe, expect, test } from 'vitest';
import { MAX_REDACTED_MESSAGE_CHARACTERS, redactValues } from '../../lambda/redact';

describe('redactValues', () => {
  test.each([
    ['a number a schema echoes', 'amount: Number must be less than or equal to 1000, received 1999.5', 'amount: Number must be less than or equal to #, received #'],
    ["JSON.parse's quote of the body", `Unexpected token 'o', "not json at all" is not valid JSON`, `Unexpected token '…', "…" is not valid JSON`],
    ['single-quoted and backquoted values', "Invalid enum value. Expected 'EUR' | 'USD', received `GBP`", "Invalid enum value. Expected '…' | '…', received `…`"],
    ['JSON values, keeping the keys', '{"issues":[{"path":["amount"],"received":-12.5e3}]}', '{"issues":[{"path":["…"],"received":#}]}'],
    ['escaped quotes inside a value', String.raw`bad "a \"quoted\" word" here`, 'bad "…" here'],
    ["the engine's property names (code, not payload) in a TypeError", "Cannot read properties of undefined (reading 'refund')", "Cannot read properties of undefined (reading 'refund')"],
    ["the engine's property names when setting and destructuring", "Cannot set properties of null (setting 'total'); Cannot destructure property 'amount' of 'order' as it is undefined.", "Cannot set properties of null (setting 'total'); Cannot destructure property 'amount' of 'order' as it is undefined."],
    ['a quoted value beside a property name', "Cannot read properties of undefined (reading 'x') for 'secret@example.com'", "Cannot read properties of undefined (reading 'x') for '…'"],
    ['words with digits stay', 'field line2 of v1.2 in order-17 failed', 'field line2 of v1.2 in order-17 failed'],
  ])('redacts %s', (_name, message, redacted) => {
    expect(redactValues(message)).toBe(redacted);
  });

  test('bounds the message', () => {
    const redacted = redactValues('x'.repeat(5000));
    expect(redacted).toHaveLength(MAX_REDACTED_MESSAGE_CHARACTERS);
    expect(redacted.endsWith('…')).toBe(true);
  });
});
