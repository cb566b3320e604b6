/**
 * The pattern matchers against answers AWS gave: public test vectors recorded against the real services, ported into
 * ./vectors/ with their origin (repository, commit, file, test and case), plus the cases this project wrote from a
 * rule an AWS documentation page states (their file cites the page). Nothing here is an expected answer written by
 * hand: each case's `expected` is what AWS answered (or what the cited page says).
 *
 * - localstack-eventbridge-event-patterns.json: EventBridge `TestEventPattern` (match, no match, or
 *   InvalidEventPatternException), run through compileEventPattern with the event-bus dialect;
 * - localstack-sns-filter-policy.json and aws-docs-sns-numeric-precision.json: SNS subscription filter policies
 *   (refused, accepted, and whether each published message reached the subscribed queue), run through
 *   compileFilterPolicy in the case's scope.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, test } from 'vitest';
import { compileEventPattern, UnsupportedPatternError } from '../../../operator/patterns/event-pattern';
import { compileFilterPolicy, type FilterPolicyScope, type SnsMessageAttribute } from '../../../operator/patterns/filter-policy';

const VECTORS = path.join(__dirname, 'vectors');

interface VectorFile<Case> {
  readonly origin: Readonly<Record<string, string>>;
  readonly cases: readonly Case[];
}

function load<Case>(file: string): VectorFile<Case> {
  return JSON.parse(fs.readFileSync(path.join(VECTORS, file), 'utf8')) as VectorFile<Case>;
}

interface EventPatternCase {
  readonly case: string;
  readonly expected: 'match' | 'no-match' | 'invalid';
  readonly pattern: unknown;
  readonly event: unknown;
}

/** What the simulator answers: whether it matches, or `invalid` when it refuses the pattern. */
function eventPatternAnswer(vector: EventPatternCase): string {
  let matches: (event: unknown) => boolean;
  try {
    matches = compileEventPattern(JSON.stringify(vector.pattern));
  } catch (error) {
    if (error instanceof UnsupportedPatternError) return 'invalid';
    throw error;
  }
  return matches(vector.event) ? 'match' : 'no-match';
}

interface SnsMessage {
  readonly body: string;
  readonly attributes?: Readonly<Record<string, SnsMessageAttribute>>;
  readonly expected: 'match' | 'no-match';
}

interface FilterPolicyCase {
  readonly case: string;
  readonly scope: FilterPolicyScope;
  readonly policy: Record<string, unknown>;
  readonly expected?: 'valid' | 'invalid';
  readonly messages?: readonly SnsMessage[];
}

/** Whether the simulator accepts the policy, and what it answers for each message. */
function filterPolicyAnswer(vector: FilterPolicyCase): { readonly validity: string; readonly messages: readonly string[] } {
  let matches: ReturnType<typeof compileFilterPolicy>;
  try {
    matches = compileFilterPolicy(vector.policy, vector.scope);
  } catch (error) {
    if (error instanceof UnsupportedPatternError) return { validity: 'invalid', messages: [] };
    throw error;
  }
  return {
    validity: 'valid',
    messages: (vector.messages ?? []).map((message) => (matches({ body: message.body, attributes: message.attributes ?? {} }) ? 'match' : 'no-match')),
  };
}

describe.each(['localstack-eventbridge-event-patterns.json'])('EventBridge event patterns: %s', (file) => {
  const vectors = load<EventPatternCase>(file);

  test('names its origin and carries cases of every outcome', () => {
    expect(vectors.origin.repository).toBeTruthy();
    expect(new Set(vectors.cases.map((vector) => vector.expected))).toEqual(new Set(['match', 'no-match', 'invalid']));
  });

  test.each(vectors.cases.map((vector) => [vector.case, vector] as const))('%s', (_name, vector) => {
    expect(eventPatternAnswer(vector)).toBe(vector.expected);
  });
});

describe.each(['localstack-sns-filter-policy.json', 'aws-docs-sns-numeric-precision.json'])('SNS filter policies: %s', (file) => {
  const vectors = load<FilterPolicyCase>(file);

  test('names its origin', () => {
    expect(vectors.origin.repository ?? vectors.origin.url).toBeTruthy();
  });

  test.each(vectors.cases.map((vector) => [vector.case, vector] as const))('%s', (_name, vector) => {
    const answer = filterPolicyAnswer(vector);
    expect(answer.validity).toBe(vector.messages === undefined ? vector.expected : 'valid');
    expect(answer.messages).toEqual((vector.messages ?? []).map((message) => message.expected));
  });
});
