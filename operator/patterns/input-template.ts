/**
 * EventBridge Pipes input transformation (`TargetParameters.InputTemplate`), as the EventBridge user guide page
 * "Amazon EventBridge Pipes input transformation" describes it.
 *
 * What the docs say, and what this module does:
 * - No template: the target receives the event itself (as JSON).
 * - Placeholders are `<$.json.path>` (json-path.ts: dot and bracket notation, array indices, `*`) and the reserved
 *   variables `<aws.pipes.pipe-arn>`, `<aws.pipes.pipe-name>`, `<aws.pipes.source-arn>`, `<aws.pipes.enrichment-arn>`,
 *   `<aws.pipes.target-arn>`, `<aws.pipes.event.ingestion-time>`, `<aws.pipes.event>`, `<aws.pipes.event.json>`. Any
 *   other `<` is literal text.
 * - A JSON template (its first non-blank character is `{` or `[`): "EventBridge Pipes automatically adds quotes to
 *   string variable values ... does not add quotes to variables that represent JSON objects or arrays", and quotes
 *   around a string variable "are permitted". So a placeholder outside a JSON string becomes the value as JSON (a
 *   string quoted); one inside a JSON string (`"id: <$.id>"` or `"<$.id>"`) inserts the string's characters. "If a
 *   JSON path references a JSON object or array, but the variable is referenced in a string, EventBridge removes any
 *   internal quotes": objects and arrays inside a string are their JSON with every `"` removed. The template must be
 *   valid JSON once its placeholders are replaced, or InputTemplateError is thrown (choice: the docs' own "Static
 *   JSON" example has a trailing comma; AWS would deliver invalid JSON, the simulator refuses it).
 * - Any other template is text: strings are inserted as they are, numbers/booleans/null as their JSON, objects and
 *   arrays as their JSON without quotes (the "Implicit body data parsing" example: `{"key": "value"}` through
 *   `<$.body>` becomes `{key: value}`).
 * - A template that is exactly one placeholder is a text template: `<$.dynamodb.NewImage.iefEnvelope.S>` delivers the
 *   string itself, i.e. the envelope JSON, not a JSON-quoted string. The docs do not state this case explicitly (their
 *   "JSON Path" example `<$.attributes.SenderId>` shows no output); this reading follows the text-template rule above.
 * - "EventBridge doesn't escape values extracted by Input Path": choice, the simulator DOES escape strings it puts into
 *   JSON (quotes, backslashes, control characters), so JSON templates always give valid JSON; a value containing `"`
 *   may therefore render differently in AWS.
 * - A path that matches nothing: "that variable isn't created and won't appear in the output". Choice: it renders as
 *   nothing in text and inside JSON strings, and as `null` where a JSON value is expected (so the output stays JSON).
 * - `<aws.pipes.event>` is the event as an (escaped) JSON string; `<aws.pipes.event.json>` is the event as a JSON value
 *   and "can only be used as the value of a JSON field, not inline in other strings": elsewhere it throws, except as a
 *   whole template (choice: then the event JSON is the output).
 * - Implicit body parsing (SQS `body`, Kinesis `data` decoded when they hold JSON) is the caller's job: pass the event
 *   as Pipes presents it to the transformer. A DynamoDB stream record needs no decoding.
 */
import { evaluateJsonPath, parseJsonPath, JsonPathSyntaxError, type JsonPath } from './json-path';

/** Values of the reserved variables; a template that uses one that is not given throws InputTemplateError. */
export interface PipeReservedVariables {
  /** `<aws.pipes.pipe-name>` */
  readonly pipeName?: string;
  /** `<aws.pipes.pipe-arn>` */
  readonly pipeArn?: string;
  /** `<aws.pipes.source-arn>` */
  readonly sourceArn?: string;
  /** `<aws.pipes.enrichment-arn>` */
  readonly enrichmentArn?: string;
  /** `<aws.pipes.target-arn>` */
  readonly targetArn?: string;
  /** `<aws.pipes.event.ingestion-time>`: an ISO 8601 timestamp. */
  readonly eventIngestionTime?: string;
}

/** A malformed input template, or one that needs a reserved variable that was not given. */
export class InputTemplateError extends Error {
  constructor(
    readonly template: string,
    problem: string,
    options?: ErrorOptions,
  ) {
    super(`Pipes input template ${JSON.stringify(template)}: ${problem}`, options);
    this.name = 'InputTemplateError';
  }
}

const RESERVED_VARIABLES = {
  'aws.pipes.pipe-arn': 'pipeArn',
  'aws.pipes.pipe-name': 'pipeName',
  'aws.pipes.source-arn': 'sourceArn',
  'aws.pipes.enrichment-arn': 'enrichmentArn',
  'aws.pipes.target-arn': 'targetArn',
  'aws.pipes.event.ingestion-time': 'eventIngestionTime',
  'aws.pipes.event': 'event',
  'aws.pipes.event.json': 'eventJson',
} as const;

type ReservedName = keyof typeof RESERVED_VARIABLES;

/** Where a placeholder stands, which decides how its value is written. */
type Position = 'text' | 'json-value' | 'json-string';

type Variable = { readonly kind: 'path'; readonly path: JsonPath } | { readonly kind: 'reserved'; readonly name: ReservedName };

type Part = { readonly kind: 'literal'; readonly text: string } | { readonly kind: 'placeholder'; readonly source: string; readonly variable: Variable; readonly position: Position };

/** A compiled template: renders one event. */
export type InputTemplateRenderer = (event: unknown, reserved?: PipeReservedVariables) => string;

function parseVariable(template: string, source: string): Variable {
  const name = source.slice(1, -1);
  if (name.startsWith('$')) {
    try {
      return { kind: 'path', path: parseJsonPath(name) };
    } catch (error) {
      if (error instanceof JsonPathSyntaxError) throw new InputTemplateError(template, `placeholder ${source}: ${error.message}`, { cause: error });
      throw error;
    }
  }
  if (Object.hasOwn(RESERVED_VARIABLES, name)) return { kind: 'reserved', name: name as ReservedName };
  throw new InputTemplateError(template, `unknown reserved variable ${source} (known: ${Object.keys(RESERVED_VARIABLES).map((known) => `<${known}>`).join(', ')})`);
}

function isPlaceholderStart(template: string, index: number): boolean {
  return template[index] === '<' && (template[index + 1] === '$' || template.startsWith('aws.', index + 1));
}

/** Splits the template into literal text and placeholders, tracking JSON strings when `json` is set. */
function tokenize(template: string, json: boolean): Part[] {
  const parts: Part[] = [];
  let literal = '';
  let inString = false;
  for (let index = 0; index < template.length; index++) {
    if (isPlaceholderStart(template, index)) {
      const close = template.indexOf('>', index);
      const nextOpen = template.indexOf('<', index + 1);
      if (close < 0 || (nextOpen >= 0 && nextOpen < close)) {
        throw new InputTemplateError(template, `placeholder starting at position ${index} is not closed with ">"`);
      }
      const source = template.slice(index, close + 1);
      if (literal !== '') parts.push({ kind: 'literal', text: literal });
      literal = '';
      const position: Position = json ? (inString ? 'json-string' : 'json-value') : 'text';
      parts.push({ kind: 'placeholder', source, variable: parseVariable(template, source), position });
      index = close;
      continue;
    }
    const character = template[index] as string;
    if (json && character === '"') {
      let backslashes = 0;
      while (literal.length - 1 - backslashes >= 0 && literal[literal.length - 1 - backslashes] === '\\') backslashes++;
      if (backslashes % 2 === 0) inString = !inString;
    }
    literal += character;
  }
  if (literal !== '') parts.push({ kind: 'literal', text: literal });
  return parts;
}

/** Checks that a JSON template is JSON once its placeholders are replaced by neutral values. */
function checkJsonSkeleton(template: string, parts: readonly Part[]): void {
  const skeleton = parts.map((part) => (part.kind === 'literal' ? part.text : part.position === 'json-value' ? 'null' : '')).join('');
  try {
    JSON.parse(skeleton);
  } catch (error) {
    throw new InputTemplateError(template, `it starts like JSON but is not valid JSON with its placeholders filled in (${(error as Error).message})`, { cause: error });
  }
}

function withoutQuotes(value: unknown): string {
  return JSON.stringify(value).replaceAll('"', '');
}

function escapeForJsonString(text: string): string {
  return JSON.stringify(text).slice(1, -1);
}

/** Writes a resolved value at its position. `undefined` = nothing there. */
function write(value: unknown, position: Position): string {
  if (value === undefined) return position === 'json-value' ? 'null' : '';
  const structured = typeof value === 'object' && value !== null;
  switch (position) {
    case 'json-value':
      return JSON.stringify(value);
    case 'json-string':
      return escapeForJsonString(typeof value === 'string' ? value : structured ? withoutQuotes(value) : JSON.stringify(value));
    case 'text':
      return typeof value === 'string' ? value : structured ? withoutQuotes(value) : JSON.stringify(value);
  }
}

function reservedValue(template: string, name: ReservedName, event: unknown, reserved: PipeReservedVariables): unknown {
  const key = RESERVED_VARIABLES[name];
  if (key === 'event') return JSON.stringify(event);
  if (key === 'eventJson') return event;
  const value = reserved[key];
  if (value === undefined) throw new InputTemplateError(template, `reserved variable <${name}> has no value: pass reserved.${key}`);
  return value;
}

/**
 * Compiles a Pipes input template once (validating it) into a renderer. `undefined` renders the event as JSON. Throws
 * {@link InputTemplateError} (naming the template) for an unclosed placeholder, an unknown reserved variable, an
 * unsupported JSONPath, a JSON template that is not valid JSON, or `<aws.pipes.event.json>` inside text or a string.
 */
export function compileInputTemplate(template: string | undefined): InputTemplateRenderer {
  if (template === undefined) return (event) => JSON.stringify(event);
  const trimmed = template.trim();
  const json = trimmed.startsWith('{') || trimmed.startsWith('[');
  const parts = tokenize(template, json);
  const wholeTemplatePlaceholder = parts.length === 1 && parts[0]?.kind === 'placeholder' && parts[0].source === template;
  for (const part of parts) {
    if (part.kind === 'placeholder' && part.variable.kind === 'reserved' && part.variable.name === 'aws.pipes.event.json' && part.position !== 'json-value' && !wholeTemplatePlaceholder) {
      throw new InputTemplateError(template, '<aws.pipes.event.json> can only be used as the value of a JSON field, not inline in text or strings');
    }
  }
  if (json) checkJsonSkeleton(template, parts);
  return (event, reserved = {}) =>
    parts
      .map((part) => {
        if (part.kind === 'literal') return part.text;
        const { variable } = part;
        if (variable.kind === 'reserved') {
          const value = reservedValue(template, variable.name, event, reserved);
          return variable.name === 'aws.pipes.event.json' ? JSON.stringify(value) : write(value, part.position);
        }
        const result = evaluateJsonPath(variable.path, event);
        return write(result.found ? result.value : undefined, part.position);
      })
      .join('');
}

/**
 * Renders a Pipes input template for one event (see the module comment for the rules). `template` undefined: the
 * event as JSON. Throws {@link InputTemplateError} as {@link compileInputTemplate} does.
 */
export function renderInputTemplate(template: string | undefined, event: unknown, reserved: PipeReservedVariables = {}): string {
  return compileInputTemplate(template)(event, reserved);
}
