/**
 * Ids unique to a verify run, so a scenario can run again and again in the same account: a run id made of the time
 * and randomness (not of the seed: two runs of one seed must not collide), and the scenario's seeded commands with
 * every id field (`id`, or a name ending in `Id`: `orderId`, `customerId`, ...) prefixed with it. The seed still fixes
 * the commands; only their ids change, the same way in every command, so a command that refers to another's id (a
 * fulfilment step to its order) still does. The run's events are those whose id or data carries the run id.
 */
import { randomBytes } from 'node:crypto';

/** A run id: `v` + the time (base 36) + 32 random bits (hex), e.g. `vmgq3k2f1-9c0e12ab`. */
export function newRunId(nowEpochMilliseconds: number, random: () => Buffer = () => randomBytes(4)): string {
  return `v${nowEpochMilliseconds.toString(36)}-${random().toString('hex')}`;
}

/** Whether a key names an id: `id`, or ends in `Id` (`orderId`). */
function isIdKey(key: string): boolean {
  return key === 'id' || /[a-z0-9]Id$/.test(key);
}

/** `command` with every string id field (at any depth) prefixed with `<runId>-`. */
export function withRunIds<T>(command: T, runId: string): T {
  const rewrite = (value: unknown, key: string | undefined): unknown => {
    if (typeof value === 'string') return key !== undefined && isIdKey(key) ? `${runId}-${value}` : value;
    if (Array.isArray(value)) return value.map((item) => rewrite(item, key));
    if (typeof value === 'object' && value !== null) return Object.fromEntries(Object.entries(value).map(([name, item]) => [name, rewrite(item, name)]));
    return value;
  };
  return rewrite(command, undefined) as T;
}

/** Whether an outbox event belongs to the run: its id or its data carries the run id. */
export function isRunEvent(event: { readonly id: string; readonly data?: unknown }, runId: string): boolean {
  return event.id.includes(runId) || JSON.stringify(event.data ?? null).includes(runId);
}
