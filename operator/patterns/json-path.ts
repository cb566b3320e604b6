/**
 * The JSONPath subset EventBridge (and Pipes input transformers) evaluate: "dot notation (for example, $.detail),
 * dashes, underscores, alphanumeric characters, array indices, wildcards (*), forward slashes" (EventBridge user guide,
 * "Amazon EventBridge Pipes input transformation"), plus bracketed quoted names (`$['detail-type']`).
 *
 * Grammar: `$` followed by segments `.name`, `.*`, `[index]`, `[*]`, `['name']` or `["name"]`. A name is any run of
 * characters other than `.`, `[`, `]`, `<`, `>`, quotes and white space.
 */

/** One step of a path. */
export type JsonPathSegment =
  | { readonly kind: 'name'; readonly name: string }
  | { readonly kind: 'index'; readonly index: number }
  | { readonly kind: 'wildcard' };

/** A parsed path. */
export interface JsonPath {
  /** The path as written. */
  readonly text: string;
  readonly segments: readonly JsonPathSegment[];
  /** True when a `*` segment makes the result a list of every match. */
  readonly hasWildcard: boolean;
}

/** The result of evaluating a path: the value, or that nothing is there. */
export type JsonPathResult = { readonly found: true; readonly value: unknown } | { readonly found: false };

/** A path that is not in the supported subset. */
export class JsonPathSyntaxError extends Error {
  constructor(
    readonly path: string,
    problem: string,
  ) {
    super(`JSONPath ${JSON.stringify(path)} is not supported: ${problem}`);
    this.name = 'JsonPathSyntaxError';
  }
}

const NAME_CHARACTER = /[^.[\]<>'"\s]/;

function readName(text: string, start: number): number {
  let end = start;
  while (end < text.length && NAME_CHARACTER.test(text[end] as string)) end++;
  return end;
}

function readBracket(text: string, start: number): { segment: JsonPathSegment; next: number } {
  const close = text.indexOf(']', start);
  if (close < 0) throw new JsonPathSyntaxError(text, `"[" at position ${start - 1} is not closed`);
  const inner = text.slice(start, close).trim();
  if (inner === '*') return { segment: { kind: 'wildcard' }, next: close + 1 };
  if (/^\d+$/.test(inner)) return { segment: { kind: 'index', index: Number(inner) }, next: close + 1 };
  const quoted = /^(['"])(.*)\1$/.exec(inner);
  if (quoted !== null && quoted[2] !== undefined && quoted[2] !== '' && !quoted[2].includes(quoted[1] as string)) {
    return { segment: { kind: 'name', name: quoted[2] }, next: close + 1 };
  }
  throw new JsonPathSyntaxError(text, `"[${inner}]" is neither an index, "*", nor a quoted name`);
}

/** Parses a path such as `$.dynamodb.NewImage.iefEnvelope.S` or `$.body.Records[3]`. */
export function parseJsonPath(text: string): JsonPath {
  if (!text.startsWith('$')) throw new JsonPathSyntaxError(text, 'it must start with "$"');
  const segments: JsonPathSegment[] = [];
  let position = 1;
  while (position < text.length) {
    const character = text[position];
    if (character === '.') {
      if (text[position + 1] === '*') {
        segments.push({ kind: 'wildcard' });
        position += 2;
        continue;
      }
      const end = readName(text, position + 1);
      if (end === position + 1) throw new JsonPathSyntaxError(text, `empty or invalid name at position ${position + 1}`);
      segments.push({ kind: 'name', name: text.slice(position + 1, end) });
      position = end;
    } else if (character === '[') {
      const { segment, next } = readBracket(text, position + 1);
      segments.push(segment);
      position = next;
    } else {
      throw new JsonPathSyntaxError(text, `unexpected ${JSON.stringify(character)} at position ${position}`);
    }
  }
  return { text, segments, hasWildcard: segments.some((segment) => segment.kind === 'wildcard') };
}

function step(values: readonly unknown[], segment: JsonPathSegment): unknown[] {
  return values.flatMap((value): unknown[] => {
    switch (segment.kind) {
      case 'name':
        return typeof value === 'object' && value !== null && !Array.isArray(value) && Object.hasOwn(value, segment.name)
          ? [(value as Record<string, unknown>)[segment.name]]
          : [];
      case 'index':
        return Array.isArray(value) && segment.index < value.length ? [value[segment.index]] : [];
      case 'wildcard':
        if (Array.isArray(value)) return value;
        return typeof value === 'object' && value !== null ? Object.values(value) : [];
    }
  });
}

/**
 * Evaluates a path against a document. Without a wildcard the result is the single value there; with one, it is the
 * array of every match (not found when nothing matches).
 */
export function evaluateJsonPath(path: JsonPath, document: unknown): JsonPathResult {
  let values: unknown[] = [document];
  for (const segment of path.segments) values = step(values, segment);
  if (path.hasWildcard) return values.length === 0 ? { found: false } : { found: true, value: values };
  return values.length === 0 || values[0] === undefined ? { found: false } : { found: true, value: values[0] };
}
