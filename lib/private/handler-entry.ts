/**
 * What can be known at synth about a function's handler module: that its `entry` file exists, and, when esbuild can
 * read it as an ES module, that it exports the configured handler. Otherwise the first is aws-cdk-lib's
 * `CannotFindEntryFile` without the construct's name, and the second passes synth and fails every invocation with
 * `Runtime.HandlerNotFound`.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Stack } from 'aws-cdk-lib';
import type { IConstruct } from 'constructs';
import type { ExpectedHandlerFactory } from '../functions/bundled-function-props';
import { validationError } from './validation-error';

/**
 * What esbuild prints for a star re-export it cannot resolve to names: `export * from` a package (packages are left
 * out of the check), or its `__reExport` helper (a CommonJS module's names are only known when it runs). The listed
 * exports then miss those names.
 */
const UNLISTED_STAR_EXPORT = /^export \* from |\b__reExport\(/m;

/**
 * The named exports of `entry` (an ES module, its local imports followed, packages left out), or undefined when not
 * knowable: a CommonJS entry, a build error, or a star re-export of a package or a CommonJS module.
 */
export function exportsOfEntry(entry: string, tsconfig?: string): readonly string[] | undefined {
  return inspectEntry(entry, tsconfig)?.exports;
}

/** What the bundle of an entry shows: its named exports and its code (packages left out). */
interface EntryModule {
  readonly exports: readonly string[];
  readonly code: string;
}

/** What the handler of a consumer must be built with (see {@link ExpectedHandlerFactory}). */
export type ExpectedFactory = ExpectedHandlerFactory;

/**
 * The runtime factory `handler` is built with when the code declares it in one statement
 * (`export const handler = createLeaseConsumer({...})`, which esbuild prints as `var handler = createLeaseConsumer(`,
 * possibly renamed `createLeaseConsumer2`); undefined when the code does not show it.
 */
export function factoryOfHandler(code: string, handler: string, factories: readonly string[]): string | undefined {
  const declaration = new RegExp(`(?:^|[\\s;])(?:var|let|const)\\s+${handler.replace(/\$/g, '\\$')}\\s*=\\s*(${factories.join('|')})\\d*\\s*\\(`);
  return declaration.exec(code)?.[1];
}

function inspectEntry(entry: string, tsconfig?: string): EntryModule | undefined {
  let result: {
    metafile?: { inputs: Record<string, { format?: string }>; outputs: Record<string, { exports: string[]; entryPoint?: string }> };
    outputFiles?: ReadonlyArray<{ text: string }>;
  };
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded only when a stack bundles
    const esbuild = require('esbuild') as typeof import('esbuild');
    result = esbuild.buildSync({
      entryPoints: [entry],
      bundle: true,
      packages: 'external',
      platform: 'node',
      format: 'esm',
      write: false,
      metafile: true,
      logLevel: 'silent',
      outdir: 'out',
      minify: false,
      // as NodejsFunction bundles it: its paths aliases resolve the same way
      tsconfig,
    });
  } catch {
    return undefined; // a build error: the real bundling reports it with its own words
  }
  const metafile = result.metafile;
  if (metafile === undefined) return undefined;
  const input = Object.entries(metafile.inputs).find(([file]) => path.resolve(file) === path.resolve(entry))?.[1];
  // a CommonJS module's exports are only known when it runs
  if (input?.format !== 'esm') return undefined;
  if (result.outputFiles?.some((output) => UNLISTED_STAR_EXPORT.test(output.text)) !== false) return undefined;
  const exports = Object.values(metafile.outputs).find((output) => output.entryPoint !== undefined)?.exports;
  return exports === undefined ? undefined : { exports, code: result.outputFiles.map((output) => output.text).join('\n') };
}

/**
 * Throws when `entry` does not exist, or (when the stack bundles) when it is an ES module that does not export
 * `handler`, or whose code builds `handler` with another consumer factory than `expected`, naming the construct, the
 * prop and what was found. `tsconfig` is the function's bundling tsconfig.
 */
export function assertHandlerEntry(scope: IConstruct, entry: string, handler: string, tsconfig?: string, expected?: ExpectedFactory): void {
  // a JavaScript caller is not held to the required prop by the compiler
  if (typeof entry !== 'string' || entry.trim() === '') {
    throw validationError(`${scope.node.path}: entry must be the path of the handler's source file, but ${JSON.stringify(entry) ?? 'undefined'} was provided`);
  }
  if (!fs.existsSync(entry) || !fs.statSync(entry).isFile()) {
    throw validationError(`${scope.node.path}: entry must be the handler's source file, but '${entry}' does not exist (resolved to ${path.resolve(entry)})`);
  }
  if (!Stack.of(scope).bundlingRequired) return;
  const module = inspectEntry(entry, tsconfig);
  if (module === undefined) return;
  const exported = module.exports;
  if (exported.includes(handler)) {
    if (expected === undefined) return;
    const found = factoryOfHandler(module.code, handler, Object.keys(expected.modeOf));
    if (found === undefined || found === expected.factory) return;
    throw validationError(
      `${scope.node.path}: handler '${handler}' of '${entry}' is built with ${found} (${expected.modeOf[found]}), but the subscriber's ` +
        `processingMode is ${expected.modeOf[expected.factory]}, whose factory is ${expected.factory}; every invocation would fail at ` +
        `cold start. Set processingMode: ${expected.modeOf[found]} or build the handler with ${expected.factory}`,
    );
  }
  throw validationError(
    `${scope.node.path}: handler must be a function '${entry}' exports, but it exports no '${handler}' ` +
      `(its exports: ${exported.length === 0 ? 'none' : exported.map((name) => `'${name}'`).join(', ')}); ` +
      `every invocation would fail with Runtime.HandlerNotFound. Export it (export const ${handler} = ...) or set the handler prop`,
  );
}
