/**
 * Generates the API reference (docs/reference/) from the doc comments of the packages' four entry points with TypeDoc
 * and typedoc-plugin-markdown:
 *
 *   npm run docs:reference                   writes docs/reference/
 *   npm run docs:reference -- --check        exits 1 when docs/reference/ is not what the sources generate
 *
 * This file lives in its own small package (scripts/api-reference/package.json, a devDependency of the project), so
 * that `typedoc` and the TypeScript it loads resolve from here: TypeDoc needs the TypeScript compiler API (6.0), which
 * the project's TypeScript 7 does not have; npm installs the two side by side only in separate folders (docs/DESIGN.md).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Application, LogLevel, OptionDefaults, TSConfigReader, type TypeDocOptions } from 'typedoc';
import type { PluginOptions } from 'typedoc-plugin-markdown';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
/** Where the checked-in reference lives. */
export const REFERENCE_DIRECTORY = path.join(REPO, 'docs', 'reference');

/** The package's entry points; each names itself with a `@module` tag (its import path) in its first doc comment. */
export const ENTRY_POINTS = ['lib/index.ts', 'lambda/index.ts', 'operator/index.ts', 'simulator/index.ts'] as const;

/** The TypeDoc and Markdown options: one page per class, interface, function, type and variable, no source links. */
function options(outputDirectory: string): TypeDocOptions & PluginOptions {
  return {
    entryPoints: ENTRY_POINTS.map((entry) => path.join(REPO, entry)),
    tsconfig: path.join(REPO, 'tsconfig.build.json'),
    plugin: ['typedoc-plugin-markdown'],
    out: outputDirectory,
    readme: 'none',
    name: 'idempotent-event-flow',
    // line numbers and commit links would change the pages on every unrelated edit
    disableSources: true,
    disableGit: true,
    excludePrivate: true,
    excludeInternal: true,
    // members a construct inherits from aws-cdk-lib's Construct and Resource are documented there, not here
    excludeExternals: true,
    sort: ['kind', 'instance-first', 'alphabetical-ignoring-documents'],
    entryFileName: 'index',
    hidePageHeader: true,
    useCodeBlocks: true,
    parametersFormat: 'table',
    interfacePropertiesFormat: 'table',
    classPropertiesFormat: 'table',
    typeAliasPropertiesFormat: 'table',
    enumMembersFormat: 'table',
    propertyMembersFormat: 'table',
    typeDeclarationFormat: 'table',
    indexFormat: 'table',
    // the project's comments use JSDoc-style block tags as aws-cdk-lib writes them; TypeDoc knows all but jsii's @attribute
    blockTags: [...OptionDefaults.blockTags, '@attribute'],
    validation: { notExported: true, invalidLink: true, rewrittenLink: true, notDocumented: false, unusedMergeModuleWith: true },
    logLevel: LogLevel.Warn,
  };
}

/** What generating reported: TypeDoc's warnings (unresolved links, referenced types that are not exported). */
export interface GenerateResult {
  readonly pages: number;
  readonly warnings: readonly string[];
}

/** Generates the reference into `outputDirectory` (replacing what is there). */
export async function generateReference(outputDirectory: string): Promise<GenerateResult> {
  const warnings: string[] = [];
  // the tsconfig reader applies the project's compiler options (without it TypeDoc compiles with none)
  const app = await Application.bootstrapWithPlugins(options(outputDirectory), [new TSConfigReader()]);
  app.logger.log = (message: string, level: LogLevel) => {
    if (level >= LogLevel.Warn) warnings.push(message);
  };
  const project = await app.convert();
  if (project === undefined) throw new Error(`TypeDoc could not convert the entry points:\n${warnings.join('\n')}`);
  app.validate(project);
  fs.rmSync(outputDirectory, { recursive: true, force: true });
  await app.generateOutputs(project);
  if (app.logger.hasErrors()) throw new Error(`TypeDoc failed:\n${warnings.join('\n')}`);
  return { pages: listFiles(outputDirectory).length, warnings };
}

/** The files under `directory`, relative, sorted. */
export function listFiles(directory: string): string[] {
  if (!fs.existsSync(directory)) return [];
  return (fs.readdirSync(directory, { recursive: true }) as string[]).filter((file) => fs.statSync(path.join(directory, file)).isFile()).sort();
}

/** The pages of `actual` that differ from `expected` (missing, extra or changed), relative. */
export function differingPages(expected: string, actual: string): string[] {
  const files = [...new Set([...listFiles(expected), ...listFiles(actual)])].sort();
  return files.filter((file) => {
    const [a, b] = [path.join(expected, file), path.join(actual, file)];
    return !fs.existsSync(a) || !fs.existsSync(b) || fs.readFileSync(a, 'utf8') !== fs.readFileSync(b, 'utf8');
  });
}

async function main(): Promise<void> {
  const check = process.argv.includes('--check');
  const target = check ? fs.mkdtempSync(path.join(os.tmpdir(), 'ief-api-reference-')) : REFERENCE_DIRECTORY;
  try {
    const { pages, warnings } = await generateReference(target);
    // a warning is a gap in the reference (a link that does not resolve, a public signature naming an unexported type)
    for (const warning of warnings) process.stderr.write(`warning: ${warning}\n`);
    if (warnings.length > 0) process.exitCode = 1;
    if (!check) {
      process.stdout.write(`docs/reference: ${pages} pages\n`);
      return;
    }
    const differ = differingPages(target, REFERENCE_DIRECTORY);
    if (differ.length > 0) {
      process.stderr.write(`docs/reference is not current (${differ.length} page(s) differ, e.g. ${differ.slice(0, 3).join(', ')}): run npm run docs:reference\n`);
      process.exitCode = 1;
      return;
    }
    process.stdout.write(`docs/reference is current (${pages} pages)\n`);
  } finally {
    if (check) fs.rmSync(target, { recursive: true, force: true });
  }
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await main();
