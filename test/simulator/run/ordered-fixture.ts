/**
 * What the simulator's tests of the ordered path share: the fixture (test/simulator/fixtures/ordered) synthesized in
 * variants (its context values) into a temporary directory, a variant derived from one by editing its template, and
 * a run of it through the CLI on the shared DynamoDB Local, its printed report returned.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { inject } from 'vitest';
import { main } from '../../../simulator/cli/main';
import { synthesize } from '../../../simulator/model/synthesize';

/** The repository's root, where the simulator runs. */
export const PROJECT = path.resolve(__dirname, '../../..');
/** The ordered fixture, relative to {@link PROJECT}. */
export const ORDERED_FIXTURE = 'test/simulator/fixtures/ordered';
const FIXTURE = ORDERED_FIXTURE;

/** Synthesized variants of the fixture, and their directory. */
export interface OrderedAssemblies {
  /** The cloud assembly of each variant, in the order given. */
  readonly assemblies: readonly string[];
  /** Removes the directory. */
  remove(): void;
}

/** Synthesizes the fixture once per context (in parallel). */
export async function synthesizeOrdered(contexts: readonly Readonly<Record<string, string>>[]): Promise<OrderedAssemblies> {
  const directory = mkdtempSync(path.join(tmpdir(), 'ief-ordered-'));
  try {
    const assemblies = await Promise.all(
      contexts.map((context, index) => synthesize({ app: `npx tsx ${FIXTURE}/app.ts`, cwd: PROJECT, outputDirectory: path.join(directory, `variant-${index}.out`), context: { ...context } })),
    );
    return { assemblies, remove: () => rmSync(directory, { recursive: true, force: true }) };
  } catch (error) {
    rmSync(directory, { recursive: true, force: true });
    throw error;
  }
}

/** A copy of `assembly` beside it (`<assembly>-<name>`) whose stack template `edit` changed (a synthesis saved). */
export function deriveAssembly(assembly: string, name: string, edit: (template: never) => void): string {
  const derived = `${assembly}-${name}`;
  cpSync(assembly, derived, { recursive: true });
  const file = path.join(derived, 'Ordered.template.json');
  const template: unknown = JSON.parse(readFileSync(file, 'utf8'));
  edit(template as never);
  writeFileSync(file, JSON.stringify(template));
  return derived;
}

/** Runs `simulate` on `assembly` with the fixture's scenario and `argv` (the count, the seed, fault options); quiet. */
export async function simulateOrdered(assembly: string, ...argv: string[]): Promise<{ code: number; stdout: string }> {
  let stdout = '';
  const code = await main(['simulate', ...argv, '--assembly', assembly, '--scenario', `${FIXTURE}/scenario.ts`, '--quiet', '--endpoint', inject('dynamoDbEndpoint')], {
    stdout: (text) => void (stdout += text),
    stderr: (text) => void (stdout += text),
    cwd: PROJECT,
  });
  return { code, stdout };
}
