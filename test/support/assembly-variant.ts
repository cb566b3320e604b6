/**
 * A copy of the example's cloud assembly (synthesized once per test run, see example-assembly.ts) with its stack's
 * template edited: how a test breaks the example at the template level (a grant statement removed, a resource added)
 * without synthesizing a changed copy of the app (about 10 s per synthesis). Each edit helper fails loudly when the
 * template no longer holds what it edits, as `replaceOnce` does for the app's source. `remove()` deletes the copy.
 */
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { exampleAssembly } from './example-assembly';

/** The example's stack, as its template file is named in the assembly. */
const STACK = 'IdempotentEventFlowExample';

/** A CloudFormation resource of a template, as JSON. */
export interface TemplateResourceJson {
  Type: string;
  Properties?: Record<string, unknown>;
  Metadata?: Record<string, unknown>;
  [attribute: string]: unknown;
}

/** A stack template, as JSON. */
export interface TemplateJson {
  Resources: Record<string, TemplateResourceJson>;
  [section: string]: unknown;
}

/** An IAM policy statement, as JSON. */
export interface StatementJson {
  Action?: string | string[];
  Resource?: unknown;
  [key: string]: unknown;
}

/** An edited copy of the example's assembly. */
export interface AssemblyVariant {
  /** The copy's directory, for `simulate --assembly`. */
  readonly directory: string;
  /** Deletes the copy. */
  remove(): void;
}

/**
 * Copies the example's assembly into a temporary directory and lets `edit` change its stack template (and add files
 * to the copy, e.g. a function's code asset, by path under `directory`).
 */
export async function exampleAssemblyVariant(edit: (template: TemplateJson, directory: string) => void): Promise<AssemblyVariant> {
  const source = await exampleAssembly();
  const directory = mkdtempSync(path.join(tmpdir(), 'example-variant-'));
  cpSync(source, directory, { recursive: true });
  const file = path.join(directory, `${STACK}.template.json`);
  const template = JSON.parse(readFileSync(file, 'utf8')) as TemplateJson;
  edit(template, directory);
  writeFileSync(file, JSON.stringify(template, undefined, 1));
  return { directory, remove: () => rmSync(directory, { recursive: true, force: true }) };
}

/** The logical id of the resource at `constructPath` (its `aws:cdk:path`); fails when there is none. */
export function logicalIdAt(template: TemplateJson, constructPath: string): string {
  const found = Object.entries(template.Resources).find(([, resource]) => resource.Metadata?.['aws:cdk:path'] === `${STACK}/${constructPath}`);
  if (found === undefined) throw new Error(`the example's template no longer has a resource at ${STACK}/${constructPath}`);
  return found[0];
}

/** The statements of the `AWS::IAM::Policy` at `constructPath` (to edit in place). */
export function policyStatements(template: TemplateJson, constructPath: string): StatementJson[] {
  const policy = template.Resources[logicalIdAt(template, constructPath)]!;
  const document = policy.Properties?.PolicyDocument as { Statement: StatementJson[] } | undefined;
  if (document === undefined) throw new Error(`${STACK}/${constructPath} has no PolicyDocument`);
  return document.Statement;
}

/** `{ "Fn::GetAtt": [logicalId, "Arn"] }`, as CDK writes a resource's ARN. */
export function arnOf(logicalId: string): unknown {
  return { 'Fn::GetAtt': [logicalId, 'Arn'] };
}

/** Whether `value` (a statement's Resource, or part of it) mentions `logicalId`. */
export function mentions(value: unknown, logicalId: string): boolean {
  return JSON.stringify(value).includes(JSON.stringify(logicalId));
}

/**
 * Removes the statements `matches` selects from `statements` (what deleting the grant from the stack's source removes
 * from the synthesized policy); fails when it selects none.
 */
export function removeStatements(statements: StatementJson[], matches: (statement: StatementJson) => boolean, what: string): void {
  const before = statements.length;
  statements.splice(0, statements.length, ...statements.filter((statement) => !matches(statement)));
  if (statements.length === before) throw new Error(`the example's template no longer has ${what}`);
}

/** Writes a Node.js code asset (`index.js`) into the copy and returns its directory name, for `aws:asset:path`. */
export function writeCodeAsset(directory: string, name: string, indexJs: string): string {
  const asset = `asset.${name}`;
  mkdirSync(path.join(directory, asset));
  writeFileSync(path.join(directory, asset, 'index.js'), indexJs);
  return asset;
}

/**
 * Removes the resource at `constructPath` and returns its logical id; fails when a resource other than those of
 * `referencesLeft` (resources the simulator does not read, e.g. a dashboard) still refers to it.
 */
export function removeResource(template: TemplateJson, constructPath: string, referencesLeft: readonly string[] = []): string {
  const logicalId = logicalIdAt(template, constructPath);
  delete template.Resources[logicalId];
  const referring = Object.entries(template.Resources).filter(([id, resource]) => !referencesLeft.includes(id) && mentions(resource, logicalId));
  if (referring.length > 0) throw new Error(`${logicalId} (${constructPath}) is still referred to by ${referring.map(([id]) => id).join(', ')}`);
  return logicalId;
}
