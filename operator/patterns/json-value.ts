/** Small helpers for parsed JSON values, shared by the pattern matchers and the input template renderer. */

/** A JSON scalar: what a pattern compares against. */
export type JsonScalar = string | number | boolean | null;

/** True for a JSON object (not null, not an array). */
export function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** True for a string, a finite number, a boolean or null. */
export function isJsonScalar(value: unknown): value is JsonScalar {
  return value === null || typeof value === 'string' || typeof value === 'boolean' || (typeof value === 'number' && Number.isFinite(value));
}

/** A short description of a value's JSON type for error messages: `a string`, `an object`, `null`, ... */
export function describeJsonType(value: unknown): string {
  if (value === null) return 'null';
  if (value === undefined) return 'nothing';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  if (typeof value === 'number') return 'a number';
  if (typeof value === 'string') return 'a string';
  if (typeof value === 'boolean') return 'a boolean';
  return `a ${typeof value}`;
}

/** `$.a.b` / `$.a["b c"]` / `$.a[0]`: appends a key or an index to a path for messages. */
export function childPath(path: string, key: string | number): string {
  if (typeof key === 'number') return `${path}[${key}]`;
  return /^[A-Za-z_$][\w$-]*$/.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`;
}
