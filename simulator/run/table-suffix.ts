/**
 * The suffix of a run's table names against a DynamoDB Local the run did not start (`--endpoint`): such a database may
 * hold the tables of an earlier run, so each run's tables get a name of their own (the wall clock and a random draw,
 * no input of the seed). The result names each table without it, as the templates name it locally, so two runs of one
 * seed give the same `--json` whichever database they ran against.
 */

/** A new suffix for a run's table names (see the module comment). */
export function newTableSuffix(): string {
  return `-${Date.now().toString(36)}${Math.floor(Math.random() * 1296).toString(36)}`;
}

/**
 * `value` with `suffix` removed from every string in it (in objects, arrays, maps and sets, copied); `value` itself
 * when there is no suffix.
 */
export function withoutTableSuffix<T>(value: T, suffix: string | undefined): T {
  if (suffix === undefined || suffix === '') return value;
  const strip = (part: unknown): unknown => {
    if (typeof part === 'string') return part.split(suffix).join('');
    if (Array.isArray(part)) return part.map(strip);
    if (part instanceof Map) return new Map([...part].map(([key, entry]) => [strip(key), strip(entry)]));
    if (part instanceof Set) return new Set([...part].map(strip));
    if (part !== null && typeof part === 'object' && (Object.getPrototypeOf(part) === Object.prototype || Object.getPrototypeOf(part) === null)) {
      return Object.fromEntries(Object.entries(part).map(([key, entry]) => [strip(key), strip(entry)]));
    }
    return part;
  };
  return strip(value) as T;
}
