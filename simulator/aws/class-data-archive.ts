/**
 * A class-data-sharing archive for DynamoDB Local (the JDK's dynamic AppCDS archive, JEP 350), so that a start maps the
 * classes an earlier server loaded instead of loading and verifying them again: about 1.25 s to the first answer
 * without one, 0.7 s with one, on a 2-core machine (docs/BENCHMARKS.md, "Third pass").
 *
 * The JDK archives only classes from jars: a directory on the class path makes it refuse (and DynamoDBLocal.jar's
 * manifest puts its own directory, `.`, on the class path). So the archive runs from jars of its own, kept in the
 * project's `node_modules/.cache/idempotent-event-flow/dynamodb-cds/<key>/`: a copy of DynamoDBLocal.jar whose
 * manifest `Class-Path` is emptied (its libraries are on the class path anyway) and the compiled loopback launcher in a
 * jar, both made with the JDK's `jar` tool. `<key>` hashes everything the archive depends on: the jar's path, size and
 * modification time, the library jars', the launcher class, the `java` the PATH finds (its real path and modification
 * time) and the JVM options.
 *
 * The first server with no archive records one: it runs with `-XX:ArchiveClassesAtExit`, and its stop lets it exit
 * normally (SIGTERM, then the dump: about 1.6 s, once) before the archive is renamed into place. One server records at
 * a time (a lock file made with O_EXCL; a lock older than {@link STALE_LOCK_MS} is a dead recorder's); the others run
 * without an archive meanwhile. The JDK checks an archive against the class path it is given and ignores one that
 * does not match; its CDS log is turned off (`-Xlog:cds=off`), so a mismatch is silent: slower, never different.
 *
 * Without a project `node_modules` (the only place this package writes to), without the `jar` tool, or when a jar
 * cannot be made, there is no archive: the caller starts the server as before.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { closeSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { commandOnPath } from './command-on-path';

/** How the server is started: from the archive's jars, using or recording the archive. */
export interface ClassDataSharing {
  /** `used`: an archive exists and is mapped; `recording`: this server records one at its normal exit. */
  readonly mode: 'used' | 'recording';
  /** The class path to run with: jars only. */
  readonly classPath: string;
  /** The JVM options that use or record the archive. */
  readonly jvmOptions: readonly string[];
  /**
   * The server has exited: `normally` when it was stopped with SIGTERM and exited by itself (a recording server dumped
   * its archive then). Puts a recorded archive in place and lets the next server record when this one could not.
   */
  exited(normally: boolean): void;
  /** The process is exiting with the server still running (it is killed): gives up the recording. */
  abandon(): void;
}

/** A recording lock older than this was left by a process that died before its server's stop. */
export const STALE_LOCK_MS = 15 * 60_000;

const ARCHIVE = 'classes.jsa';
const LOCK = 'recording.lock';
const SERVER_JAR = 'DynamoDBLocal.jar';
const LAUNCHER_JAR = 'launcher.jar';
/** The JDK's CDS log off: a mismatched archive is ignored without a warning in the server's output. */
const QUIET_CDS = ['-Xlog:cds=off', '-Xlog:cds+dynamic=off'];

/** What the archive is made from. */
export interface ClassDataSharingOptions {
  /** DynamoDB Local's directory: DynamoDBLocal.jar and DynamoDBLocal_lib/. */
  readonly directory: string;
  /** The compiled loopback launcher's class directory and main class. */
  readonly launcher: { readonly classDirectory: string; readonly mainClass: string };
  /** The project whose node_modules keeps the archive. */
  readonly projectDirectory: string;
  /** The JVM options the server runs with (an archive is kept per set of options). */
  readonly jvmOptions: readonly string[];
}

/** Where archives are kept in a project, or undefined without a node_modules. */
export function archiveCacheDirectory(projectDirectory: string): string | undefined {
  const nodeModules = path.join(projectDirectory, 'node_modules');
  return existsSync(nodeModules) ? path.join(nodeModules, '.cache', 'idempotent-event-flow', 'dynamodb-cds') : undefined;
}

function fileStamp(file: string): string {
  const stat = statSync(file);
  return `${file}\n${stat.size}\n${stat.mtimeMs}`;
}

function archiveKey(options: ClassDataSharingOptions, java: string): string {
  const hash = createHash('sha256');
  hash.update(fileStamp(path.join(options.directory, SERVER_JAR)));
  const libraries = path.join(options.directory, 'DynamoDBLocal_lib');
  for (const name of readdirSync(libraries).filter((entry) => entry.endsWith('.jar')).sort()) hash.update(`\n${fileStamp(path.join(libraries, name))}`);
  hash.update(readFileSync(path.join(options.launcher.classDirectory, `${options.launcher.mainClass}.class`)));
  hash.update(`\n${java}\n${options.jvmOptions.join(' ')}`);
  return hash.digest('hex').slice(0, 16);
}

/** Runs the JDK's `jar` tool; true when it succeeded. */
function jarTool(args: readonly string[], cwd: string): boolean {
  const result = spawnSync('jar', args, { cwd, encoding: 'utf8' });
  return result.error === undefined && result.status === 0;
}

/** Makes the two jars in a directory of their own and renames it into place; false when a jar cannot be made. */
function makeJars(cache: string, key: string, options: ClassDataSharingOptions): boolean {
  const building = mkdtempSync(path.join(cache, `${key}.building-`));
  try {
    const serverJar = path.join(building, SERVER_JAR);
    copyFileSync(path.join(options.directory, SERVER_JAR), serverJar);
    // an empty Class-Path replaces the manifest's (which names the jar's directory, `.`)
    writeFileSync(path.join(building, 'class-path.mf'), 'Class-Path: \n');
    if (!jarTool(['ufm', SERVER_JAR, 'class-path.mf'], building)) return false;
    if (!jarTool(['cf', path.join(building, LAUNCHER_JAR), '-C', options.launcher.classDirectory, '.'], building)) return false;
    rmSync(path.join(building, 'class-path.mf'));
    try {
      renameSync(building, path.join(cache, key));
    } catch {
      // another run put the same jars in place first
    }
    return true;
  } finally {
    rmSync(building, { recursive: true, force: true });
  }
}

/** Takes the recording lock, or returns false when a living recorder holds it. */
function takeLock(lock: string): boolean {
  for (let attempt = 0; attempt < 2; attempt += 1) {
    try {
      closeSync(openSync(lock, 'wx'));
      return true;
    } catch {
      try {
        if (Date.now() - statSync(lock).mtimeMs < STALE_LOCK_MS) return false;
        rmSync(lock, { force: true });
      } catch {
        // the recorder released it meanwhile: try again
      }
    }
  }
  return false;
}

/**
 * How to start DynamoDB Local with a class-data-sharing archive, or undefined when it cannot have one (see the module
 * comment); undefined too while another server records the archive.
 */
export function classDataSharing(options: ClassDataSharingOptions): ClassDataSharing | undefined {
  const cache = archiveCacheDirectory(options.projectDirectory);
  const java = commandOnPath('java');
  if (cache === undefined || java === undefined) return undefined;
  try {
    const key = archiveKey(options, java);
    const home = path.join(cache, key);
    mkdirSync(cache, { recursive: true });
    if (!existsSync(path.join(home, LAUNCHER_JAR)) && !makeJars(cache, key, options)) return undefined;
    if (!existsSync(path.join(home, LAUNCHER_JAR))) return undefined;
    const classPath = [path.join(home, LAUNCHER_JAR), path.join(home, SERVER_JAR), path.join(options.directory, 'DynamoDBLocal_lib', '*')].join(path.delimiter);
    const archive = path.join(home, ARCHIVE);
    if (existsSync(archive)) {
      return { mode: 'used', classPath, jvmOptions: [`-XX:SharedArchiveFile=${archive}`, ...QUIET_CDS], exited: () => undefined, abandon: () => undefined };
    }
    const lock = path.join(home, LOCK);
    if (!takeLock(lock)) return undefined;
    const recording = path.join(home, `${ARCHIVE}.${process.pid}.recording`);
    let settled = false;
    const release = (): void => {
      settled = true;
      rmSync(recording, { force: true });
      rmSync(lock, { force: true });
    };
    return {
      mode: 'recording',
      classPath,
      jvmOptions: [`-XX:ArchiveClassesAtExit=${recording}`, ...QUIET_CDS],
      exited: (normally) => {
        if (settled) return;
        try {
          if (normally && existsSync(recording) && statSync(recording).size > 0) renameSync(recording, archive);
        } catch {
          // no archive this time: the next server records one
        }
        release();
      },
      abandon: () => {
        if (!settled) release();
      },
    };
  } catch {
    return undefined;
  }
}
