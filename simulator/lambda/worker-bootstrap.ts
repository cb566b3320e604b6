import { REQUEST_SEQUENCE_HEADER } from './worker-protocol';
import { WORKER_TMP_SOURCE } from './worker-tmp';

/**
 * The code of a Lambda execution environment's worker thread, as a JavaScript source string: the runner starts it
 * with `new Worker(WORKER_BOOTSTRAP_SOURCE, { eval: true, ... })`, which works the same whether the simulator runs
 * from TypeScript sources (tsx, vitest) or from the compiled package (no file to locate next to this one).
 *
 * In order, the worker:
 * 0. gives the environment its own `/tmp`: a `/tmp` path given to node:fs, `require` or node:child_process reaches the
 *    environment's directory (`workerData.tmpDirectory`, its `TMPDIR`; see worker-tmp.ts);
 * 1. replaces the global `Date` so that `Date.now()`, `new Date()` and `Date()` read the simulation's
 *    {@link VirtualClock} (the shared buffer in `workerData.clockBuffer`), or until the first invocation the time an
 *    init ahead of need began at (`workerData.initClockMs`); every other behaviour is the real `Date`'s
 *    (`Date.parse`, `Date.UTC`, the constructor with arguments, `instanceof Date`, subclasses, the prototype methods);
 * 2. loads the handler the way the Lambda Node.js runtime does (aws-lambda-nodejs-runtime-interface-client,
 *    src/UserFunction.js): `dir/module.fn.nested` → `<task root>/dir/module` tried as an extensionless file, then `.js`
 *    (CommonJS, or ESM when the nearest package.json says `"type": "module"`), `.mjs` (ESM through `import()` of a
 *    file URL), `.cjs`, then `require.resolve(module)` from the task root; failures are reported as
 *    `Runtime.MalformedHandlerName`, `Runtime.ImportModuleError`, `Runtime.UserCodeSyntaxError` and
 *    `Runtime.HandlerNotFound`, or as the error the module's own code threw;
 * 3. posts `ready` (or `init-failed`), then runs each `invoke` message: async handlers (a returned promise) and
 *    callback handlers (3 parameters: the first of the callback or the returned promise decides), with a context object
 *    carrying `getRemainingTimeInMillis()` (under the seeded scheduler the function's timeout less the invocation's
 *    virtual time, which only its timers move; otherwise real time left until the deadline) and `callbackWaitsForEmptyEventLoop`;
 *    the response is JSON round-tripped (`undefined` → `null`), as Lambda serializes it; every reply is posted once
 *    the function's stdout and stderr writes have reached the parent, so its log lines come before its outcome;
 * 4. reports an uncaught exception or an unhandled rejection as `fatal` (Lambda fails the invocation and restarts the
 *    runtime; the runner terminates this worker).
 *
 * The messages are those of worker-protocol.ts. Not emulated: waiting for the event loop to empty
 * (`callbackWaitsForEmptyEventLoop` is only a flag), response streaming, `process.chdir` to the task root (workers
 * cannot change directory; relative paths resolve from the simulator's directory).
 */
export const WORKER_BOOTSTRAP_SOURCE = String.raw`
'use strict';
const { parentPort, workerData } = require('node:worker_threads');
const fs = require('node:fs');
const path = require('node:path');
const { pathToFileURL } = require('node:url');
const { createRequire } = require('node:module');
// node's own modules, for the replayable worker below (the global require is deleted next)
const requireBuiltin = require;
// an eval'd worker gets the CommonJS wrapper's names as globals; a Lambda function's ES modules do not see them
for (const name of ['require', 'module', 'exports', '__filename', '__dirname']) delete globalThis[name];

// 0. the environment's own /tmp (worker-tmp.ts)
${WORKER_TMP_SOURCE}

// 1. simulated time
const RealDate = globalThis.Date;
const realNow = RealDate.now;
// the clock's shared state (simulator/aws/clock.ts): [offset ms, frozen-at ms or 0 when running with real time]
const clockState = new BigInt64Array(workerData.clockBuffer);
// an init ahead of need reads the time it began at, until the first invocation (workerData.initClockMs)
let initClockMs = workerData.initClockMs;
const virtualNow = function now() {
  if (initClockMs !== undefined) return initClockMs;
  const frozenAt = Number(Atomics.load(clockState, 1));
  return (frozenAt === 0 ? realNow() : frozenAt) + Number(Atomics.load(clockState, 0));
};
const VirtualDate = function Date(...args) {
  if (new.target === undefined) return new RealDate(virtualNow()).toString();
  return Reflect.construct(RealDate, args.length === 0 ? [virtualNow()] : args, new.target);
};
Object.defineProperty(VirtualDate, 'length', { value: RealDate.length });
Object.defineProperty(VirtualDate, 'prototype', { value: RealDate.prototype, writable: false });
for (const name of ['parse', 'UTC']) {
  Object.defineProperty(VirtualDate, name, { value: RealDate[name], writable: true, configurable: true, enumerable: false });
}
Object.defineProperty(VirtualDate, 'now', { value: virtualNow, writable: true, configurable: true, enumerable: false });
Object.defineProperty(RealDate.prototype, 'constructor', { value: VirtualDate, writable: true, configurable: true, enumerable: false });
Object.defineProperty(globalThis, 'Date', { value: VirtualDate, writable: true, configurable: true, enumerable: false });
// Intl.DateTimeFormat's format() and formatToParts() without a date read V8's own clock, not the global Date: they are
// given the virtual date instead (the Date.prototype.toLocale* methods format their date's own value, virtual already)
{
  const intlPrototype = Intl.DateTimeFormat.prototype;
  const realFormat = Object.getOwnPropertyDescriptor(intlPrototype, 'format');
  const realFormatToParts = intlPrototype.formatToParts;
  Object.defineProperty(intlPrototype, 'format', {
    ...realFormat,
    get() {
      const bound = realFormat.get.call(this);
      return function (date) { return bound(date === undefined ? virtualNow() : date); };
    },
  });
  Object.defineProperty(intlPrototype, 'formatToParts', {
    value: function formatToParts(date) { return realFormatToParts.call(this, date === undefined ? virtualNow() : date); },
    writable: true, configurable: true, enumerable: false,
  });
}
const virtualDateNow = virtualNow;
// the invocation the worker runs (its invocationId), for the calls outside the simulator it reports
let currentInvocationId;

// 1b. a replayable worker (workerData.replay, set when the run's seeded scheduler decides the interleaving; see
// simulator/schedule/seeded-scheduler.ts): Math.random and node:crypto's and Web Crypto's random sources draw from the
// seed (randomBytes and its aliases, randomFill, randomFillSync, randomInt, randomUUID, getRandomValues), timers are virtual
// (they fire, earliest first, when the scheduler says so: only while the worker has no HTTP request outstanding), and
// the worker tells the parent each time it has gone quiet, with what it has sent and received so far
const replay = workerData.replay;
let reportQuiet = () => undefined;
if (replay !== undefined) {
  const realSetImmediate = globalThis.setImmediate;
  let state = replay.seed >>> 0;
  // mulberry32: 32 random bits a step (Math.random is one step over 2^32, as before the bytes sources were seeded)
  const nextWord = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  };
  const seededRandom = function random() {
    return nextWord() / 4294967296;
  };
  Object.defineProperty(Math, 'random', { value: seededRandom, writable: true, configurable: true, enumerable: false });
  const hex = (count) => Array.from({ length: count }, () => Math.floor(seededRandom() * 16).toString(16)).join('');
  const uuid = () => hex(8) + '-' + hex(4) + '-4' + hex(3) + '-' + '89ab'[Math.floor(seededRandom() * 4)] + hex(3) + '-' + hex(12);
  // the seed's bytes over byteLength bytes of a buffer, starting at byteOffset (an ArrayBuffer, or a view's own range)
  const fillSeeded = (buffer, byteOffset, byteLength) => {
    const bytes = ArrayBuffer.isView(buffer) ? new Uint8Array(buffer.buffer, buffer.byteOffset + byteOffset, byteLength) : new Uint8Array(buffer, byteOffset, byteLength);
    for (let index = 0; index < byteLength; index += 4) {
      const word = nextWord();
      for (let shift = 0; shift < 4 && index + shift < byteLength; shift += 1) bytes[index + shift] = (word >>> (8 * shift)) & 0xff;
    }
  };
  // each seeded function calls Node's own first, with the same arguments wherever that is safe: Node validates them
  // (the same errors, thrown at the same point) and returns what it returns, and the seed then replaces the random
  // bytes. An asynchronous form runs synchronously and calls back on a later turn (setImmediate), never in the thread
  // pool: the worker is not quiet until its callback ran, and the seed, not the pool, orders the draws
  const nodeCrypto = requireBuiltin('node:crypto');
  const like = (seeded, real) => {
    Object.defineProperty(seeded, 'name', { value: real.name, configurable: true });
    Object.defineProperty(seeded, 'length', { value: real.length, configurable: true });
    return seeded;
  };
  const realRandomBytes = nodeCrypto.randomBytes;
  const realRandomFillSync = nodeCrypto.randomFillSync;
  const realRandomFill = nodeCrypto.randomFill;
  const realRandomInt = nodeCrypto.randomInt;
  const realRandomUUID = nodeCrypto.randomUUID;
  const later = (callback, ...args) => realSetImmediate(() => callback(...args));
  const seededRandomBytes = like(function (size, callback) {
    const buffer = realRandomBytes(size);
    if (callback !== undefined && typeof callback !== 'function') realRandomBytes(size, callback);
    fillSeeded(buffer, 0, buffer.length);
    if (callback === undefined) return buffer;
    // Node calls back at once for no bytes (randomFill of size 0)
    if (buffer.length === 0) callback(null, buffer);
    else later(callback, null, buffer);
  }, realRandomBytes);
  // the byte range randomFillSync(buffer, offset, size) fills, once Node has accepted the arguments
  const fillRange = (buffer, offset, size) => {
    const elementSize = buffer.BYTES_PER_ELEMENT || 1;
    const start = (offset === undefined ? 0 : offset) * elementSize;
    return [start, size === undefined ? buffer.byteLength - start : size * elementSize];
  };
  const seededRandomFillSync = like(function (buffer, offset, size) {
    const result = realRandomFillSync(buffer, offset, size);
    const [start, length] = fillRange(buffer, offset, size);
    if (length > 0) fillSeeded(buffer, start, length);
    return result;
  }, realRandomFillSync);
  const seededRandomFill = like(function (buffer, offset, size, callback) {
    // Node's randomFill(buffer, [offset, [size,]] callback), its arguments read as Node reads them
    if (!(buffer instanceof ArrayBuffer) && !(typeof SharedArrayBuffer !== 'undefined' && buffer instanceof SharedArrayBuffer) && !ArrayBuffer.isView(buffer)) {
      return realRandomFillSync(buffer);
    }
    if (typeof offset === 'function') {
      callback = offset;
      offset = 0;
      size = buffer.length;
    } else if (typeof size === 'function') {
      callback = size;
      size = buffer.length - offset;
    } else if (typeof callback !== 'function') {
      // Node throws its own error for the callback before it starts anything
      return realRandomFill(buffer, offset, size, callback);
    }
    realRandomFillSync(buffer, offset, size);
    const [start, length] = fillRange(buffer, offset, size);
    if (length === 0) return callback(null, buffer);
    fillSeeded(buffer, start, length);
    later(callback, null, buffer);
  }, realRandomFill);
  // Node's randomInt: six bytes a draw (2^48 - 1 the largest range), a draw at or above the unbiased limit drawn again
  const RAND_MAX = 0xffffffffffff;
  const seededRandomInt = like(function (min, max, callback) {
    const minNotSpecified = typeof max === 'undefined' || typeof max === 'function';
    if (minNotSpecified) {
      callback = max;
      max = min;
      min = 0;
    }
    // Node validates: the callback first, then min and max (its messages name 'max' or 'max - min' as it was called)
    if (callback !== undefined && typeof callback !== 'function') return realRandomInt(min, max, callback);
    if (minNotSpecified) realRandomInt(max);
    else realRandomInt(min, max);
    const range = max - min;
    const limit = RAND_MAX - (RAND_MAX % range);
    const draw = new Uint8Array(6);
    let value;
    do {
      fillSeeded(draw, 0, 6);
      value = draw.reduce((sum, byte) => sum * 256 + byte, 0);
    } while (value >= limit);
    const result = (value % range) + min;
    if (callback === undefined) return result;
    process.nextTick(callback, undefined, result);
  }, realRandomInt);
  const seededUuid = like(function randomUUID(options) {
    realRandomUUID(options);
    return uuid();
  }, realRandomUUID);
  for (const [name, value] of [['randomBytes', seededRandomBytes], ['randomFillSync', seededRandomFillSync], ['randomFill', seededRandomFill], ['randomInt', seededRandomInt], ['randomUUID', seededUuid]]) {
    nodeCrypto[name] = value;
  }
  // the deprecated aliases of randomBytes (accessors returning Node's own randomBytes until set)
  for (const name of ['prng', 'rng', 'pseudoRandomBytes']) {
    if (name in nodeCrypto) Object.defineProperty(nodeCrypto, name, { value: seededRandomBytes, writable: true, configurable: true, enumerable: false });
  }
  // Web Crypto (globalThis.crypto, node:crypto's webcrypto): its methods are the prototype's, and check their 'this';
  // node:crypto's own getRandomValues (a fixed accessor, not replaceable) calls webcrypto's, so it draws from the seed too
  const webCrypto = nodeCrypto.webcrypto;
  if (webCrypto !== undefined) {
    const prototype = Object.getPrototypeOf(webCrypto);
    const realGetRandomValues = prototype.getRandomValues;
    const realWebRandomUUID = prototype.randomUUID;
    const seeded = {
      getRandomValues: like(function (...args) {
        const result = realGetRandomValues.apply(this, args);
        fillSeeded(result, 0, result.byteLength);
        return result;
      }, realGetRandomValues),
      randomUUID: like(function (...args) {
        realWebRandomUUID.apply(this, args);
        return uuid();
      }, realWebRandomUUID),
    };
    for (const name of ['getRandomValues', 'randomUUID']) {
      const descriptor = Object.getOwnPropertyDescriptor(prototype, name);
      if (descriptor !== undefined) Object.defineProperty(prototype, name, { ...descriptor, value: seeded[name] });
    }
  }
  requireBuiltin('node:module').syncBuiltinESMExports();
  // the process id: the run's for the function (the simulator's own differs at each run; ids may carry it)
  Object.defineProperty(process, 'pid', { value: replay.pid, writable: false, configurable: true, enumerable: true });

  // virtual timers: [due ms, sequence] orders them; a timer of the invocation fires only when the scheduler says
  const timers = new Map();
  let timerSequence = 0;
  let virtualNow = 0;
  let fired = 0;
  // refresh() as Node's: the delay again from now, and a timer that already fired armed again (undici drives its
  // timeouts from one tick timer it refreshes from its own callback); a cleared timer stays cleared
  class VirtualTimeout {
    constructor(timer) { this.id = timer.id; this.timer = timer; }
    ref() { return this; }
    unref() { return this; }
    hasRef() { return true; }
    refresh() {
      const timer = this.timer;
      if (timer.cleared) return this;
      timer.due = virtualNow + timer.delay;
      if (!timers.has(timer.id)) timers.set(timer.id, timer);
      reportQuiet();
      return this;
    }
    close() { clearTimer(this); return this; }
    [Symbol.toPrimitive]() { return this.id; }
  }
  const addTimer = (callback, delay, args, repeat) => {
    if (typeof callback !== 'function') throw new TypeError('The "callback" argument must be of type function');
    const ms = Number.isFinite(Number(delay)) && Number(delay) > 1 ? Number(delay) : 1;
    const timer = { id: ++timerSequence, due: virtualNow + ms, delay: ms, callback, args, repeat, cleared: false };
    timers.set(timer.id, timer);
    reportQuiet();
    return new VirtualTimeout(timer);
  };
  const clearTimer = (timer) => {
    if (timer === undefined || timer === null) return;
    if (timer instanceof VirtualTimeout) timer.timer.cleared = true;
    const id = typeof timer === 'object' ? timer.id : Number(timer);
    const pending = timers.get(id);
    if (pending === undefined) return;
    pending.cleared = true;
    timers.delete(id);
    reportQuiet();
  };
  const virtualSetTimeout = function setTimeout(callback, delay, ...args) { return addTimer(callback, delay, args, false); };
  const virtualSetInterval = function setInterval(callback, delay, ...args) { return addTimer(callback, delay, args, true); };
  virtualSetTimeout[requireBuiltin('node:util').promisify.custom] = (delay, value) => new Promise((resolve) => addTimer(resolve, delay, [value], false));
  const timersModule = requireBuiltin('node:timers');
  for (const [name, value] of [['setTimeout', virtualSetTimeout], ['setInterval', virtualSetInterval], ['clearTimeout', clearTimer], ['clearInterval', clearTimer]]) {
    globalThis[name] = value;
    timersModule[name] = value;
  }
  // node:timers/promises (also node:timers' promises): setTimeout and scheduler.wait with their signal, setInterval's
  // async iterator; an aborted wait rejects with Node's AbortError
  const abortError = (signal) => Object.assign(new Error('The operation was aborted', { cause: signal.reason }), { name: 'AbortError', code: 'ABORT_ERR' });
  const promiseTimeout = function setTimeout(delay, value, options) {
    return new Promise((resolve, reject) => {
      const signal = options === undefined || options === null ? undefined : options.signal;
      if (signal !== undefined && signal.aborted) return reject(abortError(signal));
      const onAbort = () => { clearTimer(timer); reject(abortError(signal)); };
      const timer = addTimer(() => { if (signal !== undefined) signal.removeEventListener('abort', onAbort); resolve(value); }, delay, [], false);
      if (signal !== undefined) signal.addEventListener('abort', onAbort, { once: true });
    });
  };
  const promiseInterval = async function* setInterval(delay, value, options) {
    const signal = options === undefined || options === null ? undefined : options.signal;
    if (signal !== undefined && signal.aborted) throw abortError(signal);
    let ticks = 0;
    let wake;
    const awake = () => { if (wake !== undefined) { const resolve = wake; wake = undefined; resolve(); } };
    const timer = addTimer(() => { ticks += 1; awake(); }, delay, [], true);
    if (signal !== undefined) signal.addEventListener('abort', awake, { once: true });
    try {
      for (;;) {
        if (ticks === 0) await new Promise((resolve) => { wake = resolve; });
        if (signal !== undefined && signal.aborted) throw abortError(signal);
        for (; ticks > 0; ticks -= 1) yield value;
      }
    } finally {
      clearTimer(timer);
      if (signal !== undefined) signal.removeEventListener('abort', awake);
    }
  };
  const timersPromises = requireBuiltin('node:timers/promises');
  timersPromises.setTimeout = promiseTimeout;
  timersPromises.setInterval = promiseInterval;
  if (timersPromises.scheduler !== undefined) {
    Object.defineProperty(timersPromises.scheduler, 'wait', { value: function wait(delay, options) { return promiseTimeout(delay, undefined, options); }, writable: true, configurable: true, enumerable: false });
  }
  if (timersModule.promises !== undefined && timersModule.promises !== timersPromises) {
    timersModule.promises.setTimeout = promiseTimeout;
    timersModule.promises.setInterval = promiseInterval;
  }
  // AbortSignal.timeout: a signal aborted with a TimeoutError by a virtual timer (Node's is a real, unref'd one)
  const realAbortSignalTimeout = AbortSignal.timeout;
  Object.defineProperty(AbortSignal, 'timeout', {
    value: like(function timeout(delay) {
      if (typeof delay !== 'number' || !Number.isInteger(delay) || delay < 0 || delay > 4294967295) return realAbortSignalTimeout.call(AbortSignal, delay);
      const controller = new AbortController();
      addTimer(() => controller.abort(new DOMException('The operation was aborted due to timeout', 'TimeoutError')), delay, [], false);
      return controller.signal;
    }, realAbortSignalTimeout),
    writable: true, configurable: true, enumerable: false,
  });
  requireBuiltin('node:module').syncBuiltinESMExports();

  // the monotonic clocks: the virtual date since the worker began plus the virtual time its timers moved (both only
  // move forward), so a latency a handler measures is the seed's: performance.now() and timeOrigin (the virtual date
  // the worker began at), process.hrtime (and .bigint) and process.uptime() from the same count
  const timeOrigin = virtualDateNow();
  let lastMonotonic = 0;
  const monotonicMs = () => {
    lastMonotonic = Math.max(lastMonotonic, virtualDateNow() - timeOrigin + virtualNow);
    return lastMonotonic;
  };
  const performancePrototype = Object.getPrototypeOf(performance);
  Object.defineProperty(performance, 'now', { value: like(function now() { return monotonicMs(); }, performancePrototype.now), writable: true, configurable: true, enumerable: false });
  Object.defineProperty(performance, 'timeOrigin', { value: timeOrigin, writable: true, configurable: true, enumerable: true });
  const realHrtime = process.hrtime;
  const nanos = () => BigInt(Math.round(monotonicMs() * 1e6));
  const hrtime = like(function hrtime(previous) {
    if (previous !== undefined) realHrtime(previous);
    let total = nanos();
    if (previous !== undefined) total -= BigInt(previous[0]) * 1000000000n + BigInt(previous[1]);
    return [Number(total / 1000000000n), Number(total % 1000000000n)];
  }, realHrtime);
  hrtime.bigint = like(function bigint() { return nanos(); }, realHrtime.bigint);
  process.hrtime = hrtime;
  process.uptime = like(function uptime() { return monotonicMs() / 1000; }, process.uptime);
  // the machine's uptime is the environment's (a Lambda environment is a machine of its own, started with it)
  const os = requireBuiltin('node:os');
  os.uptime = like(function uptime() { return monotonicMs() / 1000; }, os.uptime);
  // performance.mark and measure: a mark without a startTime, a measure without an end, are at the virtual now (Node's
  // own read its real monotonic clock); performance.eventLoopUtilization and nodeTiming stay real (the machine's work)
  const realMark = performancePrototype.mark;
  const realMeasure = performancePrototype.measure;
  Object.defineProperty(performance, 'mark', {
    value: like(function mark(name, options) {
      if (options !== undefined && (options === null || typeof options !== 'object')) return realMark.call(this, name, options);
      return realMark.call(this, name, { ...options, startTime: options === undefined || options.startTime === undefined ? monotonicMs() : options.startTime });
    }, realMark),
    writable: true, configurable: true, enumerable: false,
  });
  Object.defineProperty(performance, 'measure', {
    value: like(function measure(name, startOrOptions, endMark) {
      if (startOrOptions !== null && typeof startOrOptions === 'object') {
        const open = startOrOptions.end === undefined && startOrOptions.duration === undefined;
        return realMeasure.call(this, name, open ? { ...startOrOptions, end: monotonicMs() } : startOrOptions, endMark);
      }
      return realMeasure.call(this, name, startOrOptions, endMark === undefined ? monotonicMs() : endMark);
    }, realMeasure),
    writable: true, configurable: true, enumerable: false,
  });
  const nextTimer = () => {
    let next;
    for (const timer of timers.values()) if (next === undefined || timer.due < next.due || (timer.due === next.due && timer.id < next.id)) next = timer;
    return next;
  };

  // HTTP requests (node:http and https, and fetch below): started, and finished (answered, failed or closed), in all
  // and to the endpoints whose requests the scheduler holds (the DynamoDB proxy, the simulator's SQS and SNS endpoints)
  const scheduledPorts = [process.env.AWS_ENDPOINT_URL_DYNAMODB, process.env.AWS_ENDPOINT_URL_SQS, process.env.AWS_ENDPOINT_URL_SNS].filter((url) => url !== undefined).map((url) => ':' + new URL(url).port);
  const counts = { scheduledStarted: 0, scheduledFinished: 0, started: 0, finished: 0 };
  // a call to a service outside the simulator (not one of its endpoints) gets a connection of its own, closed with its
  // answer: a pooled connection sat idle between steps, and the outside server closes an idle connection after its
  // keep-alive timeout in REAL time (Node's: 5 s, often passed between two steps on a loaded machine), which raced the
  // worker's next call on the connection (the call failed with a connection error, or not, as the machine's timing
  // decided); fetch's own idle timeout runs on the worker's virtual timers, so fetch never closed the connection first.
  // The simulator's own endpoints keep their pooled connections: they never close an idle one (keep-connections-open.ts)
  const simulatorPorts = Object.entries(process.env).filter(([name, url]) => name.startsWith('AWS_ENDPOINT_URL') && url !== undefined).flatMap(([, url]) => {
    try { return [':' + new URL(url).port]; } catch { return []; }
  });
  const outside = (host) => !simulatorPorts.some((port) => host.endsWith(port));
  // each request of the invocation to DynamoDB carries its number (the proxy reads it), and each call outside the
  // simulator is reported with how many the invocation had sent by then: the run orders the calls against the
  // runtime's lease claims and step records (a call made outside them is repeated by a redelivery)
  const dynamoDbPort = process.env.AWS_ENDPOINT_URL_DYNAMODB === undefined ? undefined : ':' + new URL(process.env.AWS_ENDPOINT_URL_DYNAMODB).port;
  let invocationRequests = 0;
  const toDynamoDb = (host) => dynamoDbPort !== undefined && host.endsWith(dynamoDbPort);
  const reportOutsideCall = (method, host, requestPath) => {
    if (currentInvocationId === undefined) return;
    const [pathOnly, ...search] = String(requestPath ?? '/').split('?');
    // the query's values name the event a call was made for as its path does (they are never printed)
    const query = search.length === 0 ? [] : [...new URLSearchParams(search.join('?')).values()];
    parentPort.postMessage({ type: 'outside-call', invocationId: currentInvocationId, method: String(method ?? 'GET').toUpperCase(), host, path: pathOnly === '' ? '/' : pathOnly, ...(query.length === 0 ? {} : { query }), afterRequest: invocationRequests });
  };
  // a socket timeout (socket.setTimeout, request.setTimeout, the SDK's socketTimeout) on a connection to the
  // simulator's endpoints never fires: it is Node's real timer, and the scheduler holds a request for as much real time
  // as the other environments' steps take, while no virtual time passes (on AWS the answer takes milliseconds). Fired,
  // it closed the held request and the run waited for an answer no one waited for.
  // On an HTTP call outside the simulation (node:http's timeout option, as axios and got set it) it is a virtual timer,
  // as fetch's AbortSignal.timeout is: no virtual time passes while the call is out, so it fires only when the call
  // did not answer within the scheduler's real-time wait for outside calls (the run then says it is not replayable),
  // never by the machine's speed; each read or write on the socket starts it again, and it goes with the call.
  // Other sockets (a database client's own TCP connection) keep Node's
  const net = requireBuiltin('node:net');
  const realSocketSetTimeout = net.Socket.prototype.setTimeout;
  const toSimulator = (socket) => {
    if (typeof socket.remotePort === 'number') return simulatorPorts.includes(':' + socket.remotePort);
    const message = socket._httpMessage;
    return message !== undefined && message !== null && typeof message.getHeader === 'function' && !outside(String(message.getHeader('host') ?? ''));
  };
  const outsideHttpCall = (socket) => {
    const message = socket._httpMessage;
    return message !== undefined && message !== null && typeof message.getHeader === 'function' && outside(String(message.getHeader('host') ?? ''));
  };
  // the virtual timeout of each outside call's socket, and the calls whose end clears it
  const socketTimeouts = new Map();
  const clearSocketTimeout = (socket) => {
    const timeout = socketTimeouts.get(socket);
    if (timeout === undefined) return;
    socketTimeouts.delete(socket);
    clearTimer(timeout);
  };
  const watchedSockets = new WeakSet();
  net.Socket.prototype.setTimeout = function setTimeout(msecs, callback) {
    const virtual = !toSimulator(this) && outsideHttpCall(this);
    // Node's own checks of the duration (it throws for a bad one) before a virtual timer replaces its real one
    if (!virtual || typeof msecs !== 'number' || !(msecs >= 0)) {
      if (!toSimulator(this)) return realSocketSetTimeout.call(this, msecs, callback);
    }
    if (typeof callback === 'function') {
      if (msecs === 0) this.removeListener('timeout', callback);
      else this.once('timeout', callback);
    }
    if (!virtual) return this;
    clearSocketTimeout(this);
    if (msecs > 0 && !this.destroyed) {
      socketTimeouts.set(this, addTimer(() => {
        socketTimeouts.delete(this);
        if (!this.destroyed) this.emit('timeout');
      }, msecs, [], false));
      if (!watchedSockets.has(this)) {
        watchedSockets.add(this);
        // cleared with the call's end (in the turn its finish is counted) or the socket's
        this.once('close', () => clearSocketTimeout(this));
        this._httpMessage.once('close', () => clearSocketTimeout(this));
      }
    }
    return this;
  };
  // a read or a write on the socket starts its timeout again (Node's _unrefTimer, which its kUpdateTimer getter returns)
  const realUnrefTimer = net.Socket.prototype._unrefTimer;
  net.Socket.prototype._unrefTimer = function _unrefTimer() {
    for (let socket = this; socket !== null && socket !== undefined; socket = socket._parent) socketTimeouts.get(socket)?.refresh();
    return realUnrefTimer.call(this);
  };
  for (const moduleName of ['node:http', 'node:https']) {
    const httpModule = requireBuiltin(moduleName);
    const realRequest = httpModule.request;
    const counted = (request) => {
      const host = String(request.getHeader('host') ?? '');
      const scheduled = scheduledPorts.some((port) => host.endsWith(port));
      if (outside(host) && !request.headersSent && request.getHeader('upgrade') === undefined) {
        request.shouldKeepAlive = false;
        request.setHeader('connection', 'close');
      }
      if (toDynamoDb(host)) {
        invocationRequests += 1;
        if (!request.headersSent) request.setHeader('${REQUEST_SEQUENCE_HEADER}', String(invocationRequests));
      } else if (outside(host)) {
        reportOutsideCall(request.method, host, request.path);
        // a timeout given before the socket carried the call (net.connect's, from http.request's timeout option) is
        // Node's real timer: once the socket is the call's, it becomes the virtual one (see net.Socket's setTimeout)
        request.once('socket', (socket) => {
          if (typeof socket.timeout === 'number' && socket.timeout > 0 && !socketTimeouts.has(socket)) {
            const msecs = socket.timeout;
            realSocketSetTimeout.call(socket, 0);
            socket.setTimeout(msecs);
          }
        });
      }
      counts.started += 1;
      if (scheduled) counts.scheduledStarted += 1;
      reportQuiet();
      request.once('close', () => {
        counts.finished += 1;
        if (scheduled) counts.scheduledFinished += 1;
        reportQuiet();
      });
      return request;
    };
    httpModule.request = function request(...args) { return counted(realRequest.apply(this, args)); };
    httpModule.get = function get(...args) { const request = httpModule.request(...args); request.end(); return request; };
  }
  requireBuiltin('node:module').syncBuiltinESMExports();
  // fetch (undici, built into node) does not go through node:http: its requests are counted by undici's diagnostics
  // channels, from the request's creation to its end (the whole body received: 'trailers') or its error
  const diagnostics = requireBuiltin('node:diagnostics_channel');
  const fetches = new Map();
  diagnostics.subscribe('undici:request:create', ({ request }) => {
    const scheduled = scheduledPorts.some((port) => String(request.origin ?? '').endsWith(port));
    // undici closes the connection of a request with 'connection: close' once its answer is complete (see above)
    // (not an upgrade, a WebSocket's, whose connection is the point; and never an error thrown into undici)
    if (outside(String(request.origin ?? '')) && !request.upgrade) {
      try { request.addHeader('connection', 'close'); } catch {}
    }
    const origin = String(request.origin ?? '');
    if (toDynamoDb(origin)) {
      invocationRequests += 1;
      try { request.addHeader('${REQUEST_SEQUENCE_HEADER}', String(invocationRequests)); } catch {}
    } else if (outside(origin)) {
      reportOutsideCall(request.method, origin.replace(/^[a-z]+:\/\//i, ''), request.path);
    }
    fetches.set(request, scheduled);
    counts.started += 1;
    if (scheduled) counts.scheduledStarted += 1;
    reportQuiet();
  });
  const fetchEnded = ({ request }) => {
    if (!fetches.has(request)) return;
    const scheduled = fetches.get(request);
    fetches.delete(request);
    counts.finished += 1;
    if (scheduled) counts.scheduledFinished += 1;
    reportQuiet();
  };
  diagnostics.subscribe('undici:request:trailers', fetchEnded);
  diagnostics.subscribe('undici:request:error', fetchEnded);

  // quiet: no pending work but HTTP replies and virtual timers (requests being connected, written, looked up, files
  // being read or closed (CloseReq: the close that ends fs/promises' writeFile), a child process running are pending
  // work: the scheduler waits for a child as for a call outside the simulation); checked after every event loop turn
  // that may have followed a wake-up
  const PENDING = new Set(['FSReqCallback', 'FSReqPromise', 'FileHandleCloseReq', 'CloseReq', 'TCPConnectWrap', 'GetAddrInfoReqWrap', 'WriteWrap', 'ShutdownWrap', 'Immediate', 'PipeConnectWrap', 'ProcessWrap']);
  // quiet once QUIET_TURNS event-loop turns in a row found no pending work and no change of the counts or timers: a
  // response's body, the SDK's deserialization and the handler's continuation all run within a few turns
  const QUIET_TURNS = 8;
  let checking = false;
  let quietTurns = 0;
  let lastState = '';
  const stateOf = () => JSON.stringify([counts, fired, timers.size, invocations, posting]);
  const check = () => {
    const pending = process.getActiveResourcesInfo().some((resource) => PENDING.has(resource)) || posting > 0;
    const state = stateOf();
    quietTurns = pending || state !== lastState ? 0 : quietTurns + 1;
    lastState = state;
    if (quietTurns < QUIET_TURNS) return realSetImmediate(check);
    // what the function wrote reaches the parent before the report: the parent passes a turn's lines on when every
    // worker of the turn is quiet (the scheduler's deliveries), and a line that came later would land in a later turn
    if (outputWritten) {
      outputWritten = false;
      afterOutput(() => realSetImmediate(check));
      return;
    }
    checking = false;
    const next = nextTimer();
    parentPort.postMessage({ type: 'quiet', invocations, ...counts, timersFired: fired, timers: timers.size, nextTimerDue: next === undefined ? -1 : next.due - invocationStartedAt });
  };
  let invocationStartedAt = 0;
  let invocations = 0;
  let outputWritten = false;
  for (const stream of [process.stdout, process.stderr]) {
    const write = stream.write;
    stream.write = function (...args) {
      // the empty writes of flushOutput are not output
      if (args[0] !== undefined && args[0] !== null && args[0].length !== 0) outputWritten = true;
      return write.apply(this, args);
    };
  }
  reportQuiet = () => {
    quietTurns = 0;
    if (checking) return;
    checking = true;
    lastState = '';
    realSetImmediate(check);
  };
  globalThis.__simulatorReplay = {
    invocationStarted() { invocationStartedAt = virtualNow; invocations += 1; invocationRequests = 0; },
    // the invocation's virtual time so far: what its timers have moved it (the scheduler's time-out measure)
    elapsedMs() { return virtualNow - invocationStartedAt; },
    fireTimer() {
      const timer = nextTimer();
      fired += 1;
      if (timer !== undefined) {
        virtualNow = Math.max(virtualNow, timer.due);
        if (timer.repeat) timer.due = virtualNow + timer.delay;
        else timers.delete(timer.id);
        try { timer.callback(...timer.args); } finally { reportQuiet(); }
      } else {
        reportQuiet();
      }
    },
  };
}

// errors as the runtime reports them
function runtimeError(name, message) {
  const error = new Error(message);
  error.name = name;
  return error;
}
function describe(value) {
  if (value !== null && typeof value === 'object' && typeof value.message === 'string') {
    return { errorName: typeof value.name === 'string' && value.name !== '' ? value.name : 'Error', errorMessage: value.message };
  }
  let text;
  try { text = typeof value === 'string' ? value : JSON.stringify(value); } catch { text = String(value); }
  return { errorName: typeof value, errorMessage: String(text) };
}

// 2. the handler
const FUNCTION_EXPR = /^([^.]*)\.(.*)$/;
const requireFromTaskRoot = createRequire(path.join(workerData.taskRoot, '__simulator_bootstrap__.js'));

function tryRequireFile(file) {
  return fs.existsSync(file) ? requireFromTaskRoot(file) : undefined;
}
async function tryImportFile(file) {
  return fs.existsSync(file) ? await import(pathToFileURL(file).href) : undefined;
}
function hasPackageJsonTypeModule(folder) {
  if (folder.endsWith(path.sep + 'node_modules')) return false;
  const packageJson = path.join(folder, 'package.json');
  if (fs.existsSync(packageJson)) {
    try {
      return JSON.parse(fs.readFileSync(packageJson, 'utf8')).type === 'module';
    } catch {
      return false;
    }
  }
  const parent = path.dirname(folder);
  return parent === folder ? false : hasPackageJsonTypeModule(parent);
}
async function loadModule(taskRoot, moduleRoot, moduleName) {
  const file = path.resolve(taskRoot, moduleRoot, moduleName);
  const extensionless = tryRequireFile(file);
  if (extensionless) return extensionless;
  const typeModule = hasPackageJsonTypeModule(path.dirname(file));
  if (!typeModule) {
    const commonJs = tryRequireFile(file + '.js');
    if (commonJs) return commonJs;
  }
  const loaded = (typeModule && (await tryImportFile(file + '.js'))) || (await tryImportFile(file + '.mjs')) || tryRequireFile(file + '.cjs');
  if (loaded) return loaded;
  return requireFromTaskRoot(requireFromTaskRoot.resolve(moduleName, { paths: [taskRoot, path.resolve(taskRoot, moduleRoot)] }));
}
async function loadHandler(taskRoot, fullHandler) {
  if (fullHandler.includes('..')) {
    throw runtimeError('Runtime.MalformedHandlerName', "'" + fullHandler + "' is not a valid handler name. Use absolute paths when specifying root directories in handler names.");
  }
  const handlerString = path.basename(fullHandler);
  const moduleRoot = fullHandler.substring(0, fullHandler.indexOf(handlerString));
  const match = handlerString.match(FUNCTION_EXPR);
  if (!match) throw runtimeError('Runtime.MalformedHandlerName', "Bad handler '" + fullHandler + "': expected <module>.<function>");
  const [, moduleName, handlerPath] = match;
  let app;
  try {
    app = await loadModule(taskRoot, moduleRoot, moduleName);
  } catch (error) {
    if (error instanceof SyntaxError) throw runtimeError('Runtime.UserCodeSyntaxError', 'SyntaxError: ' + error.message);
    if (error && (error.code === 'MODULE_NOT_FOUND' || error.code === 'ERR_MODULE_NOT_FOUND')) {
      throw runtimeError('Runtime.ImportModuleError', "Error: Cannot find module '" + moduleRoot + moduleName + "' in " + taskRoot + ': ' + error.message.split('\n')[0]);
    }
    throw error;
  }
  const handler = handlerPath.split('.').reduce((nested, key) => nested && nested[key], app);
  if (!handler) throw runtimeError('Runtime.HandlerNotFound', fullHandler + ' is undefined or not exported');
  if (typeof handler !== 'function') throw runtimeError('Runtime.HandlerNotFound', fullHandler + ' is not a function');
  return handler;
}

// what the function wrote reaches the parent before the message that follows it: a write's callback runs once the
// parent has taken the data in, so an empty write after the others says everything before it has arrived
function flushOutput() {
  return Promise.all([process.stdout, process.stderr].map((stream) => new Promise((resolve) => stream.write('', () => resolve()))));
}
// messages waiting for the output before them to reach the parent: a replayable worker is not quiet until they went
let posting = 0;
function afterOutput(continuation) {
  posting += 1;
  flushOutput().then(() => {
    posting -= 1;
    continuation();
  });
}
function postAfterOutput(message) {
  afterOutput(() => parentPort.postMessage(message));
}

// 4. what would make the runtime exit
process.on('uncaughtException', (error) => {
  postAfterOutput({ type: 'fatal', ...describe(error) });
});
process.on('unhandledRejection', (reason) => {
  const { errorName, errorMessage } = describe(reason);
  postAfterOutput({ type: 'fatal', errorName: 'Runtime.UnhandledPromiseRejection', errorMessage: errorName + ': ' + errorMessage });
});

// 3. invocations
let handler;
function invoke(message) {
  const { invocationId, event, context: data } = message;
  let settled = false;
  const settle = (reply) => {
    if (settled) return;
    settled = true;
    postAfterOutput(reply);
  };
  const fail = (error) => settle({ type: 'threw', invocationId, ...describe(error) });
  const succeed = (response) => {
    let serialized;
    try {
      const text = JSON.stringify(response);
      serialized = text === undefined ? null : JSON.parse(text);
    } catch (error) {
      return fail(runtimeError('Runtime.MarshalError', 'Unable to stringify response body: ' + describe(error).errorMessage));
    }
    settle({ type: 'returned', invocationId, response: serialized });
  };
  const { deadlineMs, timeoutMs, ...fields } = data;
  // under the seeded scheduler, the time left is the scheduler's (timers move it; real time spent does not), so the
  // runtime's decisions by it (the contention retry gives up by it) are the seed's; otherwise real time to the deadline
  const getRemainingTimeInMillis =
    replay !== undefined ? () => Math.max(0, timeoutMs - globalThis.__simulatorReplay.elapsedMs()) : () => Math.max(0, deadlineMs - realNow());
  const context = {
    ...fields,
    callbackWaitsForEmptyEventLoop: true,
    getRemainingTimeInMillis,
  };
  try {
    if (handler.length >= 3) {
      const callback = (error, response) => (error !== undefined && error !== null ? fail(error) : succeed(response));
      const result = handler(event, context, callback);
      if (result !== null && typeof result === 'object' && typeof result.then === 'function') result.then(succeed, fail);
    } else {
      Promise.resolve(handler(event, context)).then(succeed, fail);
    }
  } catch (error) {
    fail(error);
  }
}

parentPort.on('message', (message) => {
  if (message && message.type === 'invoke') {
    initClockMs = undefined;
    currentInvocationId = message.invocationId;
    if (replay !== undefined) globalThis.__simulatorReplay.invocationStarted();
    invoke(message);
    reportQuiet();
  } else if (message && message.type === 'fire-timer' && replay !== undefined) {
    globalThis.__simulatorReplay.fireTimer();
  }
});
loadHandler(workerData.taskRoot, workerData.handler).then(
  (loaded) => {
    handler = loaded;
    parentPort.postMessage({ type: 'ready' });
  },
  (error) => parentPort.postMessage({ type: 'init-failed', ...describe(error) }),
);
`;
