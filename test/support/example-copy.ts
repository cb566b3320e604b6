/**
 * A copy of the example app with one change, as a user would break it: `example/` is copied into a temporary directory
 * inside the project (so that its packages resolve), its imports of the library pointed back at this checkout, the
 * change applied to the stack's source, and an app file written that synthesizes the stack (without the cdk-nag
 * validation plugins of bin/example-app.ts: the tests are about what the simulator finds). `remove()` deletes it.
 */
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';

const PROJECT = path.resolve(__dirname, '../..');

/** A changed copy of the example. */
export interface ExampleCopy {
  /** The directory of the copy (its `example/` folder is inside). */
  readonly directory: string;
  /** The app command for `simulate --app` (run from the project directory). */
  readonly app: string;
  /** Deletes the copy. */
  remove(): void;
}

/** Replaces `search` by `replacement` in `source`, and fails loudly when the example no longer has `search`. */
export function replaceOnce(source: string, search: string, replacement: string): string {
  if (!source.includes(search)) throw new Error(`the example's stack no longer contains: ${search}`);
  return source.replace(search, replacement);
}

/**
 * Copies the example and applies `change` to `example/orders-example-stack.ts` (and `changeFiles` to its functions and
 * scenario, by path under `example/`); `addFiles` are written under `example/` too.
 */
export function exampleCopy(
  change: (stackSource: string) => string,
  changeFiles: Readonly<Record<string, (source: string) => string>> = {},
  addFiles: Readonly<Record<string, string>> = {},
): ExampleCopy {
  const directory = mkdtempSync(path.join(PROJECT, 'test', '.example-copy-'));
  const example = path.join(directory, 'example');
  cpSync(path.join(PROJECT, 'example'), example, { recursive: true });
  const library = (relative: string): string => JSON.stringify(path.join(PROJECT, relative)).slice(1, -1);
  const repoint = (file: string, edit?: (source: string) => string): void => {
    let source = readFileSync(file, 'utf8')
      .replaceAll("from '../lib'", `from '${library('lib')}'`)
      .replaceAll("from '../../lambda'", `from '${library('lambda')}'`)
      .replaceAll("from '../../simulator'", `from '${library('simulator')}'`);
    if (edit !== undefined) source = edit(source);
    writeFileSync(file, source);
  };
  repoint(path.join(example, 'orders-example-stack.ts'), change);
  for (const folder of ['functions', 'simulation']) {
    for (const name of readdirSync(path.join(example, folder))) repoint(path.join(example, folder, name), changeFiles[`${folder}/${name}`]);
  }
  for (const [relative, content] of Object.entries(addFiles)) writeFileSync(path.join(example, relative), content);
  const app = path.join(directory, 'app.ts');
  writeFileSync(
    app,
    [
      "import { App } from 'aws-cdk-lib';",
      "import { OrdersExampleStack } from './example/orders-example-stack';",
      'const app = new App();',
      "new OrdersExampleStack(app, 'IdempotentEventFlowExample');",
      'app.synth();',
      '',
    ].join('\n'),
  );
  return {
    directory,
    app: `npx tsx ${path.relative(PROJECT, app)}`,
    remove: () => rmSync(directory, { recursive: true, force: true }),
  };
}
