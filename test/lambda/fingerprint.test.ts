import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { canonicalJson, derivedEventId, payloadFingerprint } from '../../lambda/fingerprint';

describe('canonicalJson', () => {
  test('sorts object keys at every level and keeps array order', () => {
    expect(canonicalJson({ b: 1, a: { d: [3, 1], c: null } })).toBe('{"a":{"c":null,"d":[3,1]},"b":1}');
  });

  test('drops undefined object members and writes undefined array items as null, as JSON.stringify does', () => {
    expect(canonicalJson({ a: undefined, b: [undefined, 1] })).toBe('{"b":[null,1]}');
  });
});

describe('canonicalJson follows JSON semantics: it fingerprints what is stored', () => {
  test('a Date is its ISO string, as JSON.stringify writes it (toJSON)', () => {
    expect(canonicalJson({ at: new Date('2026-11-26T10:00:00.000Z') })).toBe('{"at":"2026-11-26T10:00:00.000Z"}');
  });

  test('any toJSON is called with its key, and members whose JSON value is undefined are dropped', () => {
    const custom = { toJSON: (key: string) => `custom:${key}` };
    expect(canonicalJson({ a: custom, b: () => 1, c: [() => 1, Symbol('s')] })).toBe('{"a":"custom:a","c":[null,null]}');
  });

  test('property: the fingerprint of a value equals the fingerprint of its JSON round trip (what the outbox stores)', () => {
    const leaf = fc.oneof(fc.string(), fc.double(), fc.integer(), fc.boolean(), fc.constant(null), fc.constant(undefined), fc.date({ noInvalidDate: true }));
    const { tree } = fc.letrec((tie) => ({
      tree: fc.oneof({ depthSize: 'small' }, leaf, fc.array(tie('tree'), { maxLength: 4 }), fc.dictionary(fc.string({ maxLength: 6 }), tie('tree'), { maxKeys: 4 })),
    }));
    fc.assert(
      fc.property(tree, (data) => {
        const stored = JSON.parse(JSON.stringify({ type: 'T', data: data === undefined ? null : data })) as { type: string; data: unknown };
        expect(payloadFingerprint({ type: 'T', data: data === undefined ? null : data })).toBe(payloadFingerprint(stored));
      }),
      { numRuns: 300 },
    );
  });
});

describe('payloadFingerprint', () => {
  const base = { type: 'OrderPlaced', subject: 'order-1', data: { amount: 10, currency: 'EUR' } };

  test('is the same for the same payload whatever the key order', () => {
    expect(payloadFingerprint(base)).toBe(payloadFingerprint({ ...base, data: { currency: 'EUR', amount: 10 } }));
  });

  test('names its algorithm and is a sha-256 hex digest', () => {
    expect(payloadFingerprint(base)).toMatch(/^sha256:[0-9a-f]{64}$/);
  });

  test.each([
    ['data', { ...base, data: { amount: 11, currency: 'EUR' } }],
    ['type', { ...base, type: 'OrderCancelled' }],
    ['subject', { ...base, subject: 'order-2' }],
    ['subject removed', { type: base.type, data: base.data }],
  ])('changes when %s changes', (_what, changed) => {
    expect(payloadFingerprint(changed)).not.toBe(payloadFingerprint(base));
  });

  test('ignores time and source: a producer retry that rebuilds the envelope is the same event', () => {
    const envelope = { ...base, specversion: '1.0', id: 'e-1', source: 'orders', time: '2024-01-01T00:00:00Z' };
    const rebuilt = { ...envelope, time: '2024-01-01T00:00:05Z', source: 'orders-v2' };
    expect(payloadFingerprint(envelope)).toBe(payloadFingerprint(rebuilt));
  });
});

describe('derivedEventId', () => {
  test('is deterministic and UUID-shaped (version 8, RFC variant)', () => {
    const id = derivedEventId('billing', 'e-1', 0);
    expect(id).toBe(derivedEventId('billing', 'e-1', 0));
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  test('differs per subscriber, consumed event and index', () => {
    const ids = new Set([
      derivedEventId('billing', 'e-1', 0),
      derivedEventId('billing', 'e-1', 1),
      derivedEventId('billing', 'e-2', 0),
      derivedEventId('shipping', 'e-1', 0),
    ]);
    expect(ids.size).toBe(4);
  });
});
