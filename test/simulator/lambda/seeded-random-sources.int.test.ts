/**
 * Under the run's seeded scheduler every source of randomness a handler reaches through `node:crypto` or the global
 * Web Crypto object draws from the worker's seed, as `Math.random` does: `randomBytes` (and its aliases `prng`, `rng`,
 * `pseudoRandomBytes`), `randomFillSync`, `randomFill`, `randomInt`, `randomUUID`, `getRandomValues` (the module's,
 * `webcrypto`'s and `globalThis.crypto`'s), from CommonJS and from ES modules (named imports too). A handler drawing an
 * id with any of them (ulid, nanoid, uuid) draws the same id on a replay. What each returns, its errors on bad
 * arguments, its callbacks and limits are Node's: the same probe run here (real Node) and in a seeded worker describes
 * the same behaviour.
 */
import { afterAll, describe, expect, test } from 'vitest';
import { VirtualClock } from '../../../simulator/aws/clock';
import { SeededScheduler } from '../../../simulator/schedule/seeded-scheduler';
import { assetDirectory, functionModel, runner } from './handler-kit';

/** Draws from each API, as hex text (async forms included); `crypto` is node:crypto, `web` a Web Crypto object. */
const DRAWS = `async (crypto, web) => {
  const hex = (view) => Buffer.from(view.buffer, view.byteOffset, view.byteLength).toString('hex');
  const viaCallback = (start) => new Promise((resolve, reject) => start((error, value) => (error ? reject(error) : resolve(value))));
  const offsetFill = Buffer.alloc(12);
  crypto.randomFillSync(offsetFill, 4, 4);
  return {
    randomBytes: crypto.randomBytes(16).toString('hex'),
    randomBytesCallback: (await viaCallback((done) => crypto.randomBytes(8, done))).toString('hex'),
    prng: crypto.prng(4).toString('hex'),
    rng: crypto.rng(4).toString('hex'),
    pseudoRandomBytes: crypto.pseudoRandomBytes(4).toString('hex'),
    randomFillSync: hex(crypto.randomFillSync(new Uint8Array(9))),
    randomFillSyncOffset: offsetFill.toString('hex'),
    randomFillSyncArrayBuffer: hex(new Uint8Array(crypto.randomFillSync(new ArrayBuffer(6)))),
    randomFill: hex(await viaCallback((done) => crypto.randomFill(new Uint32Array(3), done))),
    randomFillOffset: hex(await viaCallback((done) => crypto.randomFill(new Uint16Array(4), 1, 2, done))),
    randomInt: crypto.randomInt(1000000),
    randomIntRange: crypto.randomInt(-5, 1000000000000),
    randomIntCallback: await viaCallback((done) => crypto.randomInt(7, 100000, done)),
    randomUUID: crypto.randomUUID(),
    getRandomValues: hex(crypto.getRandomValues(new Uint8Array(10))),
    webcryptoGetRandomValues: hex(crypto.webcrypto.getRandomValues(new BigUint64Array(2))),
    globalGetRandomValues: hex(web.getRandomValues(new Int16Array(5))),
    globalRandomUUID: web.randomUUID(),
  };
}`;

/** Node's behaviour of each API without its random values: types, sizes, identities, errors, callbacks, limits. */
const BEHAVIOUR = `async (crypto, web) => {
  const error = (run) => {
    try { run(); return 'no error'; } catch (thrown) { return { name: thrown.name, code: thrown.code, message: thrown.message, type: thrown.constructor.name }; }
  };
  const shape = (value) => (value === null || value === undefined ? String(value) : { type: value.constructor.name, length: value.length, byteLength: value.byteLength });
  const callbackArgs = (start) => new Promise((resolve) => {
    let sync = true;
    start(function (...args) { resolve({ sync, args: args.map(shape), count: args.length }); });
    sync = false;
  });
  const filled = Buffer.alloc(12);
  const sameBuffer = crypto.randomFillSync(filled, 4, 4) === filled;
  const untouched = [...filled.subarray(0, 4), ...filled.subarray(8)].every((byte) => byte === 0);
  const typed = new Uint16Array(4);
  const sameTyped = crypto.getRandomValues(typed) === typed;
  const ints = Array.from({ length: 200 }, () => crypto.randomInt(3, 6));
  return {
    shapes: {
      randomBytes: shape(crypto.randomBytes(7)), randomBytesZero: shape(crypto.randomBytes(0)),
      randomFillSyncArrayBuffer: shape(crypto.randomFillSync(new ArrayBuffer(5))),
      randomInt: typeof crypto.randomInt(10), randomUUID: typeof crypto.randomUUID(), globalRandomUUID: web.randomUUID().length,
      getRandomValues: shape(crypto.getRandomValues(new BigInt64Array(3))), limit: shape(web.getRandomValues(new Uint8Array(65536))),
    },
    sameBuffer, untouched, sameTyped, intsInRange: ints.every((n) => n >= 3 && n < 6), intsVary: new Set(ints).size > 1,
    lengths: [crypto.randomBytes.length, crypto.randomFill.length, crypto.randomFillSync.length, crypto.randomInt.length, crypto.getRandomValues.length, crypto.randomUUID.length, web.getRandomValues.length, web.randomUUID.length],
    names: [crypto.randomBytes.name, crypto.randomFill.name, crypto.randomFillSync.name, crypto.randomInt.name, crypto.getRandomValues.name, crypto.randomUUID.name, web.getRandomValues.name, web.randomUUID.name],
    callbacks: {
      randomBytes: await callbackArgs((done) => crypto.randomBytes(3, done)),
      randomBytesZero: await callbackArgs((done) => crypto.randomBytes(0, done)),
      randomFill: await callbackArgs((done) => crypto.randomFill(new Uint8Array(3), done)),
      randomFillZero: await callbackArgs((done) => crypto.randomFill(new Uint8Array(0), done)),
      randomFillOffset: await callbackArgs((done) => crypto.randomFill(Buffer.alloc(4), 1, done)),
      randomInt: await callbackArgs((done) => crypto.randomInt(9, done)),
    },
    errors: {
      randomBytesNegative: error(() => crypto.randomBytes(-1)),
      randomBytesString: error(() => crypto.randomBytes('8')),
      randomBytesCallback: error(() => crypto.randomBytes(8, 'nope')),
      randomFillSyncType: error(() => crypto.randomFillSync([1, 2])),
      randomFillSyncOffset: error(() => crypto.randomFillSync(new Uint8Array(4), 5)),
      randomFillSyncSize: error(() => crypto.randomFillSync(new Uint32Array(4), 1, 4)),
      randomFillNoCallback: error(() => crypto.randomFill(new Uint8Array(4))),
      randomFillArrayBufferOffset: error(() => crypto.randomFill(new ArrayBuffer(8), 2, () => undefined)),
      randomIntOrder: error(() => crypto.randomInt(5, 5)),
      randomIntRange: error(() => crypto.randomInt(2 ** 49)),
      randomIntRangeMin: error(() => crypto.randomInt(1, 2 ** 49)),
      randomIntUnsafe: error(() => crypto.randomInt(1.5)),
      randomIntCallback: error(() => crypto.randomInt(1, 5, 'nope')),
      randomUUIDOptions: error(() => crypto.randomUUID(5)),
      getRandomValuesFloat: error(() => crypto.getRandomValues(new Float64Array(2))),
      getRandomValuesLimit: error(() => web.getRandomValues(new Uint8Array(65537))),
      getRandomValuesThis: error(() => { const { getRandomValues } = web; getRandomValues(new Uint8Array(2)); }),
      randomUUIDThis: error(() => { const { randomUUID } = web; randomUUID(); }),
      getRandomValuesNone: error(() => web.getRandomValues()),
    },
  };
}`;

const COMMON_JS = `
const crypto = require('node:crypto');
const draws = ${DRAWS};
const behaviour = ${BEHAVIOUR};
exports.handler = async (event) => (event.probe === 'behaviour' ? behaviour(crypto, globalThis.crypto) : draws(crypto, globalThis.crypto));
`;

/** The ES-module view: named imports bound at load, and the default export. */
const ES_MODULE = `
import crypto, { randomBytes, randomFillSync, randomFill, randomInt, randomUUID, getRandomValues, webcrypto } from 'node:crypto';
const draws = ${DRAWS};
export const handler = async () => {
  const named = { randomBytes, randomFillSync, randomFill, randomInt, randomUUID, getRandomValues, webcrypto, prng: crypto.prng, rng: crypto.rng, pseudoRandomBytes: crypto.pseudoRandomBytes };
  return { named: await draws(named, webcrypto), default: await draws(crypto, globalThis.crypto) };
};
`;

const asset = assetDirectory({ 'index.js': COMMON_JS, 'esm.mjs': ES_MODULE });
afterAll(() => asset.remove());

/** What one invocation of `handler` returns, in a new run of `seed` (one environment). */
async function invokeOnce(seed: string, handler: string, event: object): Promise<Record<string, unknown>> {
  const clock = VirtualClock.frozen(Date.parse('2026-11-30T00:00:00Z'));
  const run = runner(functionModel(asset.directory, { handler }), { scheduler: new SeededScheduler(seed), clock });
  try {
    const outcome = await run.invoke(event, 'draws');
    if (outcome.kind !== 'returned') throw new Error(`the invocation ${outcome.kind}: ${JSON.stringify(outcome)}`);
    return outcome.response as Record<string, unknown>;
  } finally {
    await run.stop();
  }
}

describe('the sources of randomness under a seeded scheduler', () => {
  test.each([
    ['CommonJS', 'index.handler'],
    ['ES module', 'esm.handler'],
  ])('%s: two runs of one seed draw the same values from every API; another seed draws others', { timeout: 120_000 }, async (_kind, handler) => {
    const once = await invokeOnce('random-sources', handler, {});
    const again = await invokeOnce('random-sources', handler, {});
    const other = await invokeOnce('other-random-sources', handler, {});
    const leaves = (value: Record<string, unknown>): Array<[string, unknown]> =>
      Object.entries(value).flatMap(([key, inner]) => (typeof inner === 'object' && inner !== null ? leaves(inner as Record<string, unknown>).map(([name, leaf]): [string, unknown] => [`${key}.${name}`, leaf]) : [[key, inner]]));
    // every API was drawn from (ES module: the named imports and the default export)
    expect(leaves(once).length).toBe(handler === 'index.handler' ? 18 : 36);
    expect(again).toEqual(once);
    // each value is the seed's: another seed changes every one of them
    const otherLeaves = new Map(leaves(other));
    expect(leaves(once).filter(([name, value]) => otherLeaves.get(name) === value).map(([name]) => name)).toEqual([]);
  });

  test("each API keeps Node's behaviour: types, sizes, identities, callbacks, errors and limits", { timeout: 120_000 }, async () => {
    const crypto = (await import('node:crypto')).default;
    const behaviour = new Function(`return ${BEHAVIOUR};`)() as (crypto: unknown, web: unknown) => Promise<unknown>;
    const expected = await behaviour(crypto, globalThis.crypto);
    const seeded = await invokeOnce('random-sources', 'index.handler', { probe: 'behaviour' });
    expect(seeded).toEqual(JSON.parse(JSON.stringify(expected)));
  });
});
