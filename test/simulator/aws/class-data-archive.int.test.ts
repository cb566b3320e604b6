/**
 * DynamoDB Local's class-data-sharing archive (simulator/aws/class-data-archive.ts), with real servers: the first one
 * records the archive and writes it as its stop lets it exit, the next ones start from it; one server records at a
 * time; an archive the JDK cannot use changes nothing but the speed; without a project node_modules there is none.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { archiveCacheDirectory, classDataSharing, STALE_LOCK_MS } from '../../../simulator/aws/class-data-archive';
import { launcherCacheDirectory } from '../../../simulator/aws/compiled-launcher';
import { localClient } from '../../support/dynamodb-client';
import { dynamoDbLocalDirectory, QUICK_START_JVM_OPTIONS, startDynamoDbLocal, type DynamoDbLocal } from '../../../simulator/aws/dynamodb-local';

const made: string[] = [];
const running: DynamoDbLocal[] = [];

function project(withNodeModules = true): string {
  const directory = mkdtempSync(path.join(tmpdir(), 'ief-cds-'));
  made.push(directory);
  if (withNodeModules) mkdirSync(path.join(directory, 'node_modules'));
  return directory;
}

async function start(projectDirectory: string): Promise<DynamoDbLocal> {
  const server = await startDynamoDbLocal({ projectDirectory });
  running.push(server);
  return server;
}

async function stop(server: DynamoDbLocal): Promise<void> {
  running.splice(running.indexOf(server), 1);
  await server.stop();
}

async function tables(server: DynamoDbLocal): Promise<unknown> {
  const client = localClient({ endpoint: server.endpoint });
  try {
    return (await client.send(new ListTablesCommand({}))).TableNames;
  } finally {
    client.destroy();
  }
}

/** The archive directory of a project (one key: one JDK, one DynamoDB Local, one set of JVM options). */
function archiveHome(projectDirectory: string): string {
  const cache = archiveCacheDirectory(projectDirectory)!;
  const [key] = readdirSync(cache).filter((entry) => !entry.includes('.'));
  return path.join(cache, key!);
}

afterEach(async () => {
  await Promise.all(running.splice(0).map((server) => server.stop()));
  for (const directory of made.splice(0)) rmSync(directory, { recursive: true, force: true });
});

describe('the class-data-sharing archive of DynamoDB Local', () => {
  // one project for the tests below: the launcher's compile, the jars and the first recording are made once
  let shared: string;
  beforeAll(() => {
    shared = mkdtempSync(path.join(tmpdir(), 'ief-cds-shared-'));
    mkdirSync(path.join(shared, 'node_modules'));
  });
  afterAll(() => rmSync(shared, { recursive: true, force: true }));

  /** The loopback launcher the shared project's servers compiled. */
  function sharedLauncher(): { classDirectory: string; mainClass: string } {
    const compiled = launcherCacheDirectory(shared)!;
    const [launcherKey] = readdirSync(compiled).filter((entry) => !entry.includes('.'));
    const launcher = { classDirectory: path.join(compiled, launcherKey!), mainClass: 'LoopbackDynamoDbLocal' };
    expect(existsSync(path.join(launcher.classDirectory, 'LoopbackDynamoDbLocal.class'))).toBe(true);
    return launcher;
  }

  /** The shared project with its archive recorded. */
  async function recorded(): Promise<string> {
    // a server records when there is no archive, and writes it at its stop
    await stop(await start(shared));
    expect(existsSync(path.join(archiveHome(shared), 'classes.jsa'))).toBe(true);
    return archiveHome(shared);
  }

  test('the first server records it and writes it at its stop; the next starts from it and serves the same', async () => {
    const first = await start(shared);
    expect(first.classData).toBe('recording');
    expect(await tables(first)).toEqual([]);
    // while it records, another server runs without an archive (one recorder at a time)
    const meanwhile = await start(shared);
    expect(meanwhile.classData).toBe('none');
    expect(await tables(meanwhile)).toEqual([]);
    await stop(meanwhile);
    await stop(first);

    const home = archiveHome(shared);
    expect(readdirSync(home).sort()).toEqual(['DynamoDBLocal.jar', 'classes.jsa', 'launcher.jar']);
    const second = await start(shared);
    expect(second.classData).toBe('used');
    expect(await tables(second)).toEqual([]);
    await stop(second);
  });

  test('an archive the JDK cannot use is ignored without a word: the server starts and answers', async () => {
    const home = await recorded();
    rmSync(path.join(home, 'classes.jsa'), { force: true });
    writeFileSync(path.join(home, 'classes.jsa'), 'not an archive');
    const server = await start(shared);
    expect(server.classData).toBe('used');
    expect(await tables(server)).toEqual([]);
    await stop(server);
    rmSync(path.join(home, 'classes.jsa'), { force: true });
  });

  test('a recording lock is respected while fresh (its recorder may be running) and taken over once stale (its process died)', () => {
    // the jars are there (the first test made them), the archive is not; the options a start of the shared project uses
    const home = archiveHome(shared);
    rmSync(path.join(home, 'classes.jsa'), { force: true });
    const options = { directory: dynamoDbLocalDirectory(), launcher: sharedLauncher(), projectDirectory: shared, jvmOptions: QUICK_START_JVM_OPTIONS };
    writeFileSync(path.join(home, 'recording.lock'), '');
    expect(classDataSharing(options)).toBeUndefined();
    const longAgo = (Date.now() - STALE_LOCK_MS - 60_000) / 1000;
    utimesSync(path.join(home, 'recording.lock'), longAgo, longAgo);
    const takenOver = classDataSharing(options);
    expect(takenOver?.mode).toBe('recording');
    // its lock is fresh now: nobody else records
    expect(classDataSharing(options)).toBeUndefined();
    // a recorder that gives up leaves neither a lock nor an archive
    takenOver!.abandon();
    expect(existsSync(path.join(home, 'recording.lock'))).toBe(false);
    expect(existsSync(path.join(home, 'classes.jsa'))).toBe(false);
    expect(classDataSharing(options)?.mode).toBe('recording');
  });

  test('without a DynamoDB Local to archive, there is no archive and nothing is written', () => {
    const projectDirectory = project();
    const options = { directory: path.join(projectDirectory, 'missing'), launcher: { classDirectory: projectDirectory, mainClass: 'Missing' }, projectDirectory, jvmOptions: [] };
    expect(classDataSharing(options)).toBeUndefined();
    expect(existsSync(archiveCacheDirectory(projectDirectory)!)).toBe(false);
  });

  test('keeps nothing outside a project node_modules: without one, there is no archive', () => {
    const projectDirectory = project(false);
    expect(archiveCacheDirectory(projectDirectory)).toBeUndefined();
    // a real launcher class (the shared project's compile) and a real DynamoDB Local: only a place to keep the archive is missing
    const launcher = sharedLauncher();
    expect(classDataSharing({ directory: dynamoDbLocalDirectory(), launcher, projectDirectory, jvmOptions: [] })).toBeUndefined();
    expect(existsSync(path.join(projectDirectory, 'node_modules'))).toBe(false);
  });
});
