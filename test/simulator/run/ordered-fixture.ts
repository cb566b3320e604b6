/**
 * What the simulator's tests of the ordered path share: the fixture (test/simulator/fixtures/ordered) synthesized in
 * variants (its context values) into a temporary directory, variants derived from one by editing its template (a
 * synthesis saved: ../../support/assembly-variant.ts), and a run of it through the CLI on the shared DynamoDB Local,
 * its printed report returned.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { inject } from 'vitest';
import { main } from '../../../simulator/cli/main';
import { synthesize } from '../../../simulator/model/synthesize';
import { assemblyVariant, type AssemblyVariant, type TemplateJson } from '../../support/assembly-variant';

/** The repository's root, where the simulator runs. */
export const PROJECT = path.resolve(__dirname, '../../..');
/** The ordered fixture, relative to {@link PROJECT}. */
export const ORDERED_FIXTURE = 'test/simulator/fixtures/ordered';
/** The fixture's stack. */
const STACK = 'Ordered';

/** Synthesized variants of the fixture, and the edited copies made of them. */
export interface OrderedAssemblies {
  /** The cloud assembly of each variant, in the order given. */
  readonly assemblies: readonly string[];
  /** A copy of `assembly` whose stack template `edit` changed; removed with the rest. */
  edited(assembly: string, edit: (template: TemplateJson) => void): string;
  /** Removes the directory and every edited copy. */
  remove(): void;
}

/** Synthesizes the fixture once per context (in parallel). */
export async function synthesizeOrdered(contexts: readonly Readonly<Record<string, string>>[]): Promise<OrderedAssemblies> {
  const directory = mkdtempSync(path.join(tmpdir(), 'ief-ordered-'));
  try {
    const assemblies = await Promise.all(
      contexts.map((context, index) => synthesize({ app: `npx tsx ${ORDERED_FIXTURE}/app.ts`, cwd: PROJECT, outputDirectory: path.join(directory, `variant-${index}.out`), context: { ...context } })),
    );
    const copies: AssemblyVariant[] = [];
    return {
      assemblies,
      edited: (assembly, edit) => {
        const copy = assemblyVariant(assembly, STACK, (template) => edit(template));
        copies.push(copy);
        return copy.directory;
      },
      remove: () => {
        for (const copy of copies) copy.remove();
        rmSync(directory, { recursive: true, force: true });
      },
    };
  } catch (error) {
    rmSync(directory, { recursive: true, force: true });
    throw error;
  }
}

/** Runs `simulate` on `assembly` with the fixture's scenario and `argv` (the count, the seed, fault options); quiet. */
export async function simulateOrdered(assembly: string, ...argv: string[]): Promise<{ code: number; stdout: string }> {
  return simulateOrderedWith('scenario.ts', assembly, ...argv);
}

/** As {@link simulateOrdered}, with another of the fixture's scenario files (`scenario-both.ts` for the `both` variant). */
export async function simulateOrderedWith(scenarioFile: string, assembly: string, ...argv: string[]): Promise<{ code: number; stdout: string }> {
  let stdout = '';
  const code = await main(['simulate', ...argv, '--assembly', assembly, '--scenario', `${ORDERED_FIXTURE}/${scenarioFile}`, '--quiet', '--endpoint', inject('dynamoDbEndpoint')], {
    stdout: (text) => void (stdout += text),
    stderr: (text) => void (stdout += text),
    cwd: PROJECT,
  });
  return { code, stdout };
}
