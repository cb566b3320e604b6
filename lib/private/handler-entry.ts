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
  return Object.values(metafile.outputs).find((output) => output.entryPoint !== undefined)?.exports;
}

/**
 * Throws when `entry` does not exist, or (when the stack bundles) when it is an ES module that does not export
 * `handler`, naming the construct, the prop and what was found. `tsconfig` is the function's bundling tsconfig.
 */
export function assertHandlerEntry(scope: IConstruct, entry: string, handler: string, tsconfig?: string): void {
  // a JavaScript caller is not held to the required prop by the compiler
  if (typeof entry !== 'string' || entry.trim() === '') {
    throw new Error(`${scope.node.path}: entry must be the path of the handler's source file, but ${JSON.stringify(entry) ?? 'undefined'} was provided`);
  }
  if (!fs.existsSync(entry) || !fs.statSync(entry).isFile()) {
    throw new Error(`${scope.node.path}: entry must be the handler's source file, but '${entry}' does not exist (resolved to ${path.resolve(entry)})`);
  }
  if (!Stack.of(scope).bundlingRequired) return;
  const exported = exportsOfEntry(entry, tsconfig);
  if (exported === undefined || exported.includes(handler)) return;
  throw new Error(
    `${scope.node.path}: handler must be a function '${entry}' exports, but it exports no '${handler}' ` +
      `(its exports: ${exported.length === 0 ? 'none' : exported.map((name) => `'${name}'`).join(', ')}); ` +
      `every invocation would fail with Runtime.HandlerNotFound. Export it (export const ${handler} = ...) or set the handler prop`,
  );
}
