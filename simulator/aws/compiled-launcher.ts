/**
 * The loopback launcher of DynamoDB Local (`LoopbackDynamoDbLocal.java`), compiled once and kept, so that a start does
 * not pay for compiling it again.
 *
 * `java Launcher.java` (a single-file source program) compiles the source in memory on every start: about 0.5 s of the
 * 1.9 s a start took on a 2-core machine (docs/BENCHMARKS.md, "The simulator's inner loop"). Here `javac` compiles it
 * once, against the installed jar, into the project's `node_modules/.cache/idempotent-event-flow/dynamodb-launcher/`,
 * in a directory named by a hash of everything the class depends on (the launcher's source, the jar's path, size and
 * modification time, the `javac` the PATH finds: its real path and modification time), so an edited launcher, another
 * DynamoDB Local or another JDK compiles anew; no process is started to tell whether the cache holds it. A compile is
 * written to a directory of its own and renamed into place, so two runs starting at once never see half a class.
 *
 * When there is no project `node_modules` (a cache there is the only place this package writes to; the system's
 * temporary directory is shared with other users, who could replace a class that then runs as this user), no `javac`,
 * or the compile fails, the caller runs the source program as before: slower, never different.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import * as path from 'node:path';
import { commandOnPath } from './command-on-path';

/** A launcher ready to run: `java -cp <classDirectory>:<jar classpath> <mainClass> ...`. */
export interface CompiledLauncher {
  readonly classDirectory: string;
  readonly mainClass: string;
}

/** Where compiled launchers are kept in a project. */
export function launcherCacheDirectory(projectDirectory: string): string | undefined {
  const nodeModules = path.join(projectDirectory, 'node_modules');
  return existsSync(nodeModules) ? path.join(nodeModules, '.cache', 'idempotent-event-flow', 'dynamodb-launcher') : undefined;
}

/**
 * The launcher at `sourceFile` compiled against `jarFile` (and the jars of `classPath`), from the cache or compiled
 * now; undefined when it cannot be (see the module comment).
 */
export function compiledLauncher(options: { readonly sourceFile: string; readonly jarFile: string; readonly classPath: string; readonly projectDirectory: string }): CompiledLauncher | undefined {
  const cache = launcherCacheDirectory(options.projectDirectory);
  if (cache === undefined) return undefined;
  const mainClass = path.basename(options.sourceFile, '.java');
  let key: string;
  try {
    const jar = statSync(options.jarFile);
    const javac = commandOnPath('javac');
    if (javac === undefined) return undefined;
    key = createHash('sha256')
      .update(readFileSync(options.sourceFile))
      .update(`\n${options.jarFile}\n${jar.size}\n${jar.mtimeMs}\n${javac}`)
      .digest('hex')
      .slice(0, 16);
  } catch {
    return undefined;
  }
  const classDirectory = path.join(cache, key);
  if (existsSync(path.join(classDirectory, `${mainClass}.class`))) return { classDirectory, mainClass };
  try {
    mkdirSync(cache, { recursive: true });
    const building = mkdtempSync(path.join(cache, `${key}.building-`));
    const compiled = spawnSync('javac', ['-nowarn', '-cp', options.classPath, '-d', building, options.sourceFile], { encoding: 'utf8' });
    if (compiled.error !== undefined || compiled.status !== 0 || !existsSync(path.join(building, `${mainClass}.class`))) {
      rmSync(building, { recursive: true, force: true });
      return undefined;
    }
    try {
      renameSync(building, classDirectory);
    } catch {
      // another run put its compile in place first: the same source, the same class
      rmSync(building, { recursive: true, force: true });
    }
    return existsSync(path.join(classDirectory, `${mainClass}.class`)) ? { classDirectory, mainClass } : undefined;
  } catch {
    return undefined;
  }
}
