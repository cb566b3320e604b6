import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { compiledLauncher, launcherCacheDirectory } from '../../../simulator/aws/compiled-launcher';
import { dynamoDbLocalDirectory } from '../../../simulator/aws/dynamodb-local';

const jarFile = path.join(dynamoDbLocalDirectory(), 'DynamoDBLocal.jar');
const made: string[] = [];

function project(withNodeModules: boolean): string {
  const directory = mkdtempSync(path.join(tmpdir(), 'ief-launcher-'));
  made.push(directory);
  if (withNodeModules) mkdirSync(path.join(directory, 'node_modules'));
  return directory;
}

function source(directory: string, body: string): string {
  const file = path.join(directory, 'Hello.java');
  writeFileSync(file, `public class Hello { public static void main(String[] args) { ${body} } }\n`);
  return file;
}

afterEach(() => {
  for (const directory of made.splice(0)) rmSync(directory, { recursive: true, force: true });
});

describe('compiledLauncher', () => {
  test('compiles once into the project cache and reuses the class while nothing it depends on changed', () => {
    const projectDirectory = project(true);
    const sourceFile = source(projectDirectory, 'System.out.println("a");');
    const first = compiledLauncher({ sourceFile, jarFile, classPath: jarFile, projectDirectory });
    expect(first).toEqual({ classDirectory: expect.stringContaining(launcherCacheDirectory(projectDirectory)!), mainClass: 'Hello' });
    const compiledAt = statSync(path.join(first!.classDirectory, 'Hello.class')).mtimeMs;

    const second = compiledLauncher({ sourceFile, jarFile, classPath: jarFile, projectDirectory });
    expect(second).toEqual(first);
    expect(statSync(path.join(second!.classDirectory, 'Hello.class')).mtimeMs).toBe(compiledAt);

    // an edited launcher is compiled anew, beside the old one
    const edited = compiledLauncher({ sourceFile: source(projectDirectory, 'System.out.println("b");'), jarFile, classPath: jarFile, projectDirectory });
    expect(edited?.classDirectory).not.toBe(first!.classDirectory);
  });

  test('keeps nothing outside a project node_modules: without one, the caller runs the source program', () => {
    const projectDirectory = project(false);
    expect(launcherCacheDirectory(projectDirectory)).toBeUndefined();
    expect(compiledLauncher({ sourceFile: source(projectDirectory, ''), jarFile, classPath: jarFile, projectDirectory })).toBeUndefined();
  });

  test('a source javac refuses leaves no class behind and no cache entry', () => {
    const projectDirectory = project(true);
    const sourceFile = source(projectDirectory, 'this does not compile');
    expect(compiledLauncher({ sourceFile, jarFile, classPath: jarFile, projectDirectory })).toBeUndefined();
    const cache = launcherCacheDirectory(projectDirectory)!;
    expect(readdirSync(cache)).toEqual([]);
  });
});
