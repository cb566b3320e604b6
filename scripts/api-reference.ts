/**
 * Generates the API reference (docs/reference/) from the doc comments of the three entry points, with Microsoft's
 * API Extractor (which brings its own TypeScript with the compiler API: the project's TypeScript 7 has none yet) and
 * API Documenter (Markdown):
 *
 *   npx tsx scripts/api-reference.ts          writes docs/reference/
 *   npx tsx scripts/api-reference.ts --check  exits 1 when docs/reference/ is not what the sources generate
 *
 * Steps: the project's `tsc` emits the declarations into .cache/api-reference (so package imports resolve), API
 * Extractor reads each entry point's declarations into a doc model, API Documenter writes one Markdown page per item.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Extractor, ExtractorConfig, type IConfigFile } from '@microsoft/api-extractor';

const REPO = path.resolve(__dirname, '..');
const OUTPUT = path.join(REPO, 'docs', 'reference');
// in the repository (so package imports resolve from its node_modules) but not under node_modules, which API Extractor
// takes for external packages and leaves out
const WORK = path.join(REPO, '.cache', 'api-reference');

/** A package's bin file, found from its package.json (whose `exports` may not list the bin). */
function binOf(packageName: string, bin: string): string {
  return path.join(path.dirname(require.resolve(`${packageName}/package.json`)), 'bin', bin);
}

/** The package's entry points, by the name their reference is filed under. */
export const ENTRY_POINTS = [
  { name: 'idempotent-event-flow', declarations: 'lib/index.d.ts', importedAs: 'idempotent-event-flow' },
  { name: 'idempotent-event-flow-runtime', declarations: 'lambda/index.d.ts', importedAs: 'idempotent-event-flow/runtime' },
  { name: 'idempotent-event-flow-simulator', declarations: 'simulator/index.d.ts', importedAs: 'idempotent-event-flow/simulator' },
] as const;

/** Generates the reference into `outputDirectory`. */
export function generateReference(outputDirectory: string): void {
  fs.rmSync(WORK, { recursive: true, force: true });
  const declarations = path.join(WORK, 'dts');
  const models = path.join(WORK, 'models');
  fs.mkdirSync(models, { recursive: true });
  execFileSync(
    process.execPath,
    [binOf('typescript', 'tsc'), '-p', path.join(REPO, 'tsconfig.build.json'), '--outDir', declarations, '--emitDeclarationOnly', '--declaration', '--sourceMap', 'false'],
    { cwd: REPO, stdio: 'inherit' },
  );
  for (const entry of ENTRY_POINTS) {
    const entryFile = path.join(declarations, entry.declarations);
    const configObject: IConfigFile = {
      projectFolder: declarations,
      mainEntryPointFilePath: entryFile,
      compiler: { overrideTsconfig: { compilerOptions: { target: 'ES2022', module: 'nodenext', moduleResolution: 'nodenext', types: ['node'], skipLibCheck: true }, files: [entryFile] } },
      apiReport: { enabled: false },
      docModel: { enabled: true, apiJsonFilePath: path.join(models, `${entry.name}.api.json`) },
      dtsRollup: { enabled: false },
      tsdocMetadata: { enabled: false },
      messages: {
        // the doc comments follow the project's style (JSDoc-like tags such as @default), not strict TSDoc
        extractorMessageReporting: { default: { logLevel: process.env.API_REFERENCE_DEBUG ? 'warning' : 'none' } },
        tsdocMessageReporting: { default: { logLevel: 'none' } },
        compilerMessageReporting: { default: { logLevel: 'error' } },
      },
    };
    const config = ExtractorConfig.prepare({
      configObject,
      configObjectFullPath: undefined,
      packageJsonFullPath: path.join(REPO, 'package.json'),
      packageJson: { name: entry.name, version: '0.0.0' },
    });
    const result = Extractor.invoke(config, {
      localBuild: true,
      // its notice that it analyses with its own TypeScript is expected (the point of using it): not printed
      messageCallback: (message) => void (message.handled = message.logLevel === 'none' || message.messageId === 'console-preamble' || message.messageId === 'console-compiler-version-notice'),
    });
    if (!result.succeeded) throw new Error(`API Extractor failed on ${entry.declarations}: ${result.errorCount} error(s)`);
  }
  fs.rmSync(outputDirectory, { recursive: true, force: true });
  execFileSync(process.execPath, [binOf('@microsoft/api-documenter', 'api-documenter'), 'markdown', '-i', models, '-o', outputDirectory], {
    cwd: REPO,
    stdio: 'ignore',
  });
}

/** The files under `directory`, relative, sorted. */
export function listFiles(directory: string): string[] {
  if (!fs.existsSync(directory)) return [];
  return (fs.readdirSync(directory, { recursive: true }) as string[]).filter((file) => fs.statSync(path.join(directory, file)).isFile()).sort();
}

function main(): void {
  const check = process.argv.includes('--check');
  if (!check) {
    generateReference(OUTPUT);
    process.stdout.write(`docs/reference: ${listFiles(OUTPUT).length} pages\n`);
    return;
  }
  const fresh = path.join(WORK, 'fresh');
  generateReference(fresh);
  const [expected, actual] = [listFiles(fresh), listFiles(OUTPUT)];
  const differ = [...new Set([...expected, ...actual])].filter((file) => {
    const [a, b] = [path.join(fresh, file), path.join(OUTPUT, file)];
    return !fs.existsSync(a) || !fs.existsSync(b) || fs.readFileSync(a, 'utf8') !== fs.readFileSync(b, 'utf8');
  });
  if (differ.length > 0) {
    process.stderr.write(`docs/reference is not current (${differ.length} page(s) differ, e.g. ${differ.slice(0, 3).join(', ')}): run npm run docs:reference\n`);
    process.exit(1);
  }
  process.stdout.write(`docs/reference is current (${expected.length} pages)\n`);
}

if (require.main === module) main();
