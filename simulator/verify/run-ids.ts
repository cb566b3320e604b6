/**
 * Ids unique to a verify run, so a scenario can run again and again in the same account: a run id made of the time
 * and randomness (not of the seed: two runs of one seed must not collide), and the scenario's seeded commands with
 * every id field prefixed with it. An id field is one whose name says so, however it is spelt: `id`, `orderId`,
 * `orderID`, `order_id`, `order-id`, and the other words of identity (`key`, `number`, `no`, `ref`, `reference`,
 * `token`, `uuid`, `guid`: `idempotencyKey`, `orderNumber`, `order_no`), each also plural (a list of ids: `orderIds`,
 * `order_ids`, `ids`: every string in it is made unique), and a one-word lower-case name ending in `id` (`orderid`,
 * `customerid`; not an English word such as `paid`, `valid`, `grid`). The seed still fixes the commands; only their
 * ids change, the same way in every command, so a command that refers to another's id (a fulfilment step to its order)
 * still does. A command verify cannot make unique is refused before anything is sent ({@link RunIdError}): an id field
 * holding a number (prefixing would change its type), or no id field at all (two runs would send the same command:
 * the producer would take the second for the first, or its events could not be told as the run's). The run's events
 * are those whose id or data carries the run id.
 */
import { randomBytes } from 'node:crypto';

/** A run id: `v` + the time (base 36) + 32 random bits (hex), e.g. `vmgq3k2f1-9c0e12ab`. */
export function newRunId(nowEpochMilliseconds: number, random: () => Buffer = () => randomBytes(4)): string {
  return `v${nowEpochMilliseconds.toString(36)}-${random().toString('hex')}`;
}

/** Thrown for a command verify cannot make unique to the run: says which field, and what to do. */
export class RunIdError extends Error {
  public override readonly name = 'RunIdError';
}

/** The words of identity, as the last word of a field name (each also plural: a list of ids, `orderIds`, `order_ids`). */
const ID_WORDS = ['id', 'key', 'number', 'no', 'ref', 'reference', 'token', 'uuid', 'guid'];
const WHOLE = new RegExp(`^(${ID_WORDS.join('|')})s?$`, 'i');
const SNAKE = new RegExp(`[_-](${ID_WORDS.join('|')})s?$`, 'i');
/** camelCase: the word starts with a capital after a lower-case letter or digit (`orderId`, `orderID`, `orderIds`), so `paid` is none. */
const CAMEL = new RegExp(`[a-z0-9](${ID_WORDS.map((word) => `${word[0]!.toUpperCase()}${word.slice(1)}|${word.toUpperCase()}`).join('|')})s?$`);
/** One lower-case word ending in `id` (`orderid`, `customerid`, `skuids`): a stem of two or more letters or digits. */
const LOWER = /^[a-z][a-z0-9]+ids?$/;
/** English words ending in `id` that name no id (`paid`, `valid`, `grid`, ...); words ending in `oid` or `aid` neither. */
const NOT_ID_WORDS = new Set(
  [
    'acid', 'amid', 'arid', 'grid', 'skid', 'slid', 'squid', 'valid', 'invalid', 'solid', 'fluid', 'liquid', 'rapid', 'vivid', 'humid', 'lurid',
    'lucid', 'timid', 'tepid', 'rigid', 'morbid', 'torpid', 'placid', 'rancid', 'florid', 'horrid', 'candid', 'stupid', 'splendid', 'sordid',
    'fervid', 'turgid', 'pallid', 'putrid', 'insipid', 'intrepid', 'cupid', 'hybrid', 'orchid', 'pyramid', 'druid', 'eyelid', 'forbid',
    'outbid', 'overbid', 'underbid', 'rebid', 'mislaid', 'unsaid', 'undid', 'redid', 'overdid', 'outdid', 'katydid', 'bifid', 'gravid', 'livid', 'viscid',
  ],
);

/** Whether a one-word lower-case name is an id (see LOWER and NOT_ID_WORDS). */
function isLowerCaseId(key: string): boolean {
  if (!LOWER.test(key)) return false;
  const singular = key.endsWith('ids') ? key.slice(0, -1) : key;
  return !NOT_ID_WORDS.has(singular) && !/(oid|aid)$/.test(singular);
}

/** Whether a field name names an id (see the module comment). */
export function isIdKey(key: string): boolean {
  return WHOLE.test(key) || SNAKE.test(key) || CAMEL.test(key) || isLowerCaseId(key);
}

/**
 * `command` with every string id field (at any depth) prefixed with `<runId>-`; each value it made is added to
 * `minted` (what `--cleanup` matches keys against, exactly). Throws {@link RunIdError} for a command it cannot make
 * unique (see the module comment).
 */
export function withRunIds<T>(command: T, runId: string, minted?: Set<string>): T {
  let rewritten = 0;
  const rewrite = (value: unknown, key: string | undefined, at: string): unknown => {
    const idField = key !== undefined && isIdKey(key);
    if (typeof value === 'string') {
      if (!idField) return value;
      rewritten += 1;
      const unique = `${runId}-${value}`;
      minted?.add(unique);
      return unique;
    }
    if ((typeof value === 'number' || typeof value === 'bigint') && idField) {
      throw new RunIdError(
        `the command's id field '${at}' holds a number (${String(value)}): verify makes a command unique to its run by prefixing the run id to its string id fields, and a number cannot take it without changing type; give the scenario's commands string ids (e.g. '${String(value)}')`,
      );
    }
    if (Array.isArray(value)) return value.map((item, index) => rewrite(item, key, `${at}[${index}]`));
    if (typeof value === 'object' && value !== null) return Object.fromEntries(Object.entries(value).map(([name, item]) => [name, rewrite(item, name, at === '' ? name : `${at}.${name}`)]));
    return value;
  };
  const result = rewrite(command, undefined, '') as T;
  if (rewritten === 0) {
    throw new RunIdError(
      `the command ${JSON.stringify(command)?.slice(0, 200)} has no id field verify can make unique to the run (a string field named id, ...Id, ..._id, ...Key, ...Number, ...): a second run would send the same command (the producer would take it for the first run's) and its events could not be told apart; give the command an id field`,
    );
  }
  return result;
}

/** Whether an outbox event belongs to the run: its id or its data carries the run id (random: no other item carries it). */
export function isRunEvent(event: { readonly id: string; readonly data?: unknown }, runId: string): boolean {
  return event.id.includes(runId) || JSON.stringify(event.data ?? null).includes(runId);
}
