/**
 * Keys with dots are paths. Event Ruler (the matcher of EventBridge event patterns and Pipes filters) and SNS's
 * MessageBody filtering both flatten a pattern and a document into dot-joined paths before matching, so a key
 * `"a.b"` means the field `b` inside `a`, on either side: the pattern `{"a.b": ["x"]}` matches `{"a": {"b": "x"}}`, and
 * the pattern `{"a": {"b": ["x"]}}` matches `{"a.b": "x"}` (EventBridge user guide, "Considerations when creating event
 * patterns"; AWS's recorded answers in test/simulator/patterns/vectors/: `dot_joining_*`,
 * `test_filter_policy_on_message_body_dot_attribute`). Both are brought to the nested form here; `$or` is no path.
 */
import { isJsonObject } from './json-value';

/** Whether any key of the value, at any depth, has a dot (nothing to do otherwise). */
function hasDottedKey(value: unknown): boolean {
  if (Array.isArray(value)) return value.some(hasDottedKey);
  if (!isJsonObject(value)) return false;
  return Object.entries(value).some(([key, child]) => key.includes('.') || hasDottedKey(child));
}

/**
 * Puts `value` at `path` in `target`. Where two keys name the same path (`{"a.b": 1, "a": {"b": 2}}`), a document
 * keeps both values, as the flattened document does: an array of them (a field matches when any element matches).
 */
function place(target: Record<string, unknown>, path: readonly string[], value: unknown): void {
  const [head, ...rest] = path as [string, ...string[]];
  if (rest.length === 0) {
    if (!(head in target)) target[head] = value;
    else if (isJsonObject(target[head]) && isJsonObject(value)) for (const [key, child] of Object.entries(value)) place(target[head] as Record<string, unknown>, [key], child);
    else target[head] = [...(Array.isArray(target[head]) ? (target[head] as unknown[]) : [target[head]]), value];
    return;
  }
  const existing = target[head];
  if (isJsonObject(existing)) place(existing, rest, value);
  else if (existing === undefined) {
    const child: Record<string, unknown> = {};
    target[head] = child;
    place(child, rest, value);
  } else {
    const child: Record<string, unknown> = {};
    place(child, rest, value);
    target[head] = [...(Array.isArray(existing) ? existing : [existing]), child];
  }
}

function expand(value: unknown, isPath: (key: string) => boolean): unknown {
  if (Array.isArray(value)) return value.map((element) => expand(element, isPath));
  if (!isJsonObject(value)) return value;
  const result: Record<string, unknown> = {};
  for (const [key, child] of Object.entries(value)) place(result, isPath(key) ? key.split('.') : [key], expand(child, isPath));
  return result;
}

/** A parsed JSON document with every dotted key made a nested path (the document itself when it has none). */
export function expandDocumentKeys(document: unknown): unknown {
  return hasDottedKey(document) ? expand(document, (key) => key.includes('.')) : document;
}

/** Puts a pattern's `value` at `path`; objects of nested fields merge, anything else defined twice is `onConflict`. */
function placeInPattern(target: Record<string, unknown>, path: readonly string[], value: unknown, onConflict: (path: string) => never, done: readonly string[] = []): void {
  const [head, ...rest] = path as [string, ...string[]];
  const here = [...done, head];
  const existing = target[head];
  if (rest.length > 0) {
    if (existing === undefined) target[head] = {};
    else if (!isJsonObject(existing)) onConflict(here.join('.'));
    placeInPattern(target[head] as Record<string, unknown>, rest, value, onConflict, here);
    return;
  }
  if (existing === undefined) target[head] = value;
  else if (isJsonObject(existing) && isJsonObject(value)) for (const [key, child] of Object.entries(value)) placeInPattern(existing, [key], child, onConflict, here);
  else onConflict(here.join('.'));
}

/**
 * A pattern with every dotted field name made a nested path. Value lists (arrays) and the operator objects inside them
 * are left as they are; `$or` branches are expanded as patterns. A path given twice, other than as two objects of
 * nested fields (`{"a.b": ["x"], "a": {"b": ["y"]}}`), calls `onConflict` with the path.
 */
export function expandPatternKeys(pattern: unknown, onConflict: (path: string) => never): unknown {
  if (!isJsonObject(pattern) || !hasDottedKey(pattern)) return pattern;
  const result: Record<string, unknown> = {};
  for (const [key, child] of Object.entries(pattern)) {
    const value = key === '$or' && Array.isArray(child) ? child.map((branch) => expandPatternKeys(branch, onConflict)) : isJsonObject(child) ? expandPatternKeys(child, onConflict) : child;
    placeInPattern(result, key !== '$or' && key.includes('.') ? key.split('.') : [key], value, onConflict);
  }
  return result;
}
