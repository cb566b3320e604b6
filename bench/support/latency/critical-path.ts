/**
 * The critical path of one invocation, from the DynamoDB requests it sent (each with its start and end): the longest
 * chain of requests each starting at or after the previous one's end. Its length is the invocation's round trips on
 * the critical path, which do not depend on how fast the machine or DynamoDB Local is; weighted by a modelled cost
 * per request (the added latency plus the operation's service time), it is the invocation's modelled latency. Pure: no
 * I/O, no clock.
 *
 * The chain is a timing relation, not a causal one: a request sent after another one ended is on a chain after it
 * whether or not it waited for it. So a request the client sent late (its CPU busy) can lengthen a chain; it cannot
 * shorten one (a request that waited for another's response starts after that response). On a quiet machine with a
 * round trip much longer than the CPU work between concurrent sends, the two agree (the bench checks it on the
 * round-trip floor consumer, whose chain is known: the most records of the batch on one item).
 */

/** One request an invocation sent, on one clock (e.g. `performance.now()` milliseconds). */
export interface TimedRequest {
  /** The operation's name, e.g. `TransactWriteItems`. */
  readonly operation: string;
  readonly startMs: number;
  /** At or after `startMs`. */
  readonly endMs: number;
  /**
   * The request whose response came last before this one was sent (its index in the same list), if any: the one it
   * waited for, when the code sends on from a response without yielding to another (see {@link causalPath}).
   */
  readonly after?: number;
}

/** The critical path of an invocation. */
export interface CriticalPath {
  /** The most requests on one chain (0 for an invocation that sent none). */
  readonly roundTrips: number;
  /** The operations of one longest chain (by count), in order: which requests the invocation waited for. */
  readonly operations: readonly string[];
  /** The largest sum of `costOf(operation)` over one chain (it may be another chain than the longest by count). */
  readonly modeledMs: number;
}

/**
 * The critical path of `requests` (in any order): the longest chain by count and the heaviest by `costOf`. Request b
 * follows request a on a chain when b starts at or after a's end. Throws on a request that ends before it starts.
 */
export function criticalPath(requests: readonly TimedRequest[], costOf: (operation: string) => number = () => 1): CriticalPath {
  for (const request of requests) {
    if (!(request.endMs >= request.startMs)) throw new RangeError(`a request ends before it starts: ${request.operation} ${request.startMs}-${request.endMs}`);
  }
  // in order of start (then end): every request a chain can put before request i comes earlier in this order
  const sorted = [...requests].sort((a, b) => a.startMs - b.startMs || a.endMs - b.endMs);
  const longest: number[] = [];
  const previous: number[] = [];
  const heaviest: number[] = [];
  let last = -1;
  let heaviestMs = 0;
  sorted.forEach((request, i) => {
    let count = 0;
    let before = -1;
    let weight = 0;
    for (let j = 0; j < i; j++) {
      const earlier = sorted[j] as TimedRequest;
      if (earlier.endMs > request.startMs) continue;
      if ((longest[j] as number) > count) {
        count = longest[j] as number;
        before = j;
      }
      weight = Math.max(weight, heaviest[j] as number);
    }
    longest.push(count + 1);
    previous.push(before);
    heaviest.push(weight + costOf(request.operation));
    if (last === -1 || (longest[i] as number) > (longest[last] as number)) last = i;
    heaviestMs = Math.max(heaviestMs, heaviest[i] as number);
  });
  const operations: string[] = [];
  for (let i = last; i !== -1; i = previous[i] as number) operations.unshift((sorted[i] as TimedRequest).operation);
  return { roundTrips: last === -1 ? 0 : (longest[last] as number), operations, modeledMs: heaviestMs };
}

/**
 * The causal critical path of `requests` (an invocation's, in recording order): each request follows the one named by
 * its `after` (the request whose response came last before it was sent), and the path is the longest such chain by
 * count, and the heaviest by `costOf`. Unlike {@link criticalPath}, a chain never jumps from one record's requests to
 * another's because the server queued one of them: when DynamoDB Local serves ten concurrent requests one after
 * another, the last one's follow-up starts after the first one's follow-up ended, and the timing chain counts both.
 * Throws on an `after` that is not an earlier request of the list.
 */
export function causalPath(requests: readonly TimedRequest[], costOf: (operation: string) => number = () => 1): CriticalPath {
  const depth: number[] = [];
  const weight: number[] = [];
  let last = -1;
  let heaviestMs = 0;
  requests.forEach((request, i) => {
    const after = request.after;
    if (after !== undefined && !(Number.isInteger(after) && after >= 0 && after < i)) {
      throw new RangeError(`request ${i} (${request.operation}) follows ${after}, which is not an earlier request of the list`);
    }
    depth.push(after === undefined ? 1 : (depth[after] as number) + 1);
    weight.push((after === undefined ? 0 : (weight[after] as number)) + costOf(request.operation));
    if (last === -1 || (depth[i] as number) > (depth[last] as number)) last = i;
    heaviestMs = Math.max(heaviestMs, weight[i] as number);
  });
  const operations: string[] = [];
  for (let i: number | undefined = last === -1 ? undefined : last; i !== undefined; i = (requests[i] as TimedRequest).after) operations.unshift((requests[i] as TimedRequest).operation);
  return { roundTrips: last === -1 ? 0 : (depth[last] as number), operations, modeledMs: heaviestMs };
}

/**
 * Service time per operation, from the requests of `requests` that were alone in flight (no other request of the list
 * overlapped them): per operation name, the 10th percentile of their durations (nearest rank: the least of up to 10
 * samples) and the median. The low percentile is the model's figure: on a busy machine a request's duration is mostly
 * the wait for a core (the median moved from 16 to 42 ms between two runs minutes apart at load 20-30), and the fastest
 * requests are those that met the least of it. An operation with no such request has no entry. Requests that touch at
 * an instant (one ends as the other starts) do not overlap.
 */
export function soloServiceTimes(requests: readonly TimedRequest[]): Map<string, { readonly p10Ms: number; readonly medianMs: number; readonly samples: number }> {
  const durations = new Map<string, number[]>();
  requests.forEach((request, i) => {
    const overlapped = requests.some((other, j) => j !== i && other.startMs < request.endMs && request.startMs < other.endMs);
    if (overlapped) return;
    durations.set(request.operation, [...(durations.get(request.operation) ?? []), request.endMs - request.startMs]);
  });
  const times = new Map<string, { p10Ms: number; medianMs: number; samples: number }>();
  for (const [operation, samples] of [...durations.entries()].sort(([a], [b]) => a.localeCompare(b))) {
    const sorted = [...samples].sort((a, b) => a - b);
    const middle = Math.floor(sorted.length / 2);
    const medianMs = sorted.length % 2 === 1 ? (sorted[middle] as number) : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
    times.set(operation, { p10Ms: sorted[Math.ceil(0.1 * sorted.length) - 1] as number, medianMs, samples: sorted.length });
  }
  return times;
}
