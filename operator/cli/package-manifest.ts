/**
 * Where an idempotent-event-flow package is on disk and its version, read from its package.json: the nearest one above
 * a module that names the package (its folder in the repository, the installed package's root for a user).
 */
import { existsSync, readFileSync } from 'node:fs';
import * as path from 'node:path';

/** The operator package's name. */
export const OPERATOR_PACKAGE = '@idempotent-event-flow/operator';

/** The root directory and version of the package `name` that holds `directory`, or undefined when no package.json above names it. */
export function packageAbove(directory: string, name: string): { readonly root: string; readonly version: string } | undefined {
  for (let current = directory; ; current = path.dirname(current)) {
    const manifest = path.join(current, 'package.json');
    if (existsSync(manifest)) {
      const { name: found, version } = JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string; version?: string };
      if (found === name && version !== undefined) return { root: current, version };
    }
    if (path.dirname(current) === current) return undefined;
  }
}

/** The operator package's root directory and version. */
export function operatorPackage(): { readonly root: string; readonly version: string } | undefined {
  return packageAbove(__dirname, OPERATOR_PACKAGE);
}
