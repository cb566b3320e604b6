/**
 * npm 11 runs a dependency's install script only when package.json's `allowScripts` approves it, and warns on every
 * `npm ci` about each one it does not cover ("install scripts not yet covered by allowScripts"). The repository's
 * package.json covers every package of the lockfile that has one, so `npm ci` prints no such warning (a harmless
 * warning is silenced at its source) and a new dependency with an install script is a decision, not noise.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, test } from 'vitest';

const REPO = path.resolve(__dirname, '..', '..');
const readJson = <T>(file: string): T => JSON.parse(fs.readFileSync(path.join(REPO, file), 'utf8')) as T;

describe("the repository's install scripts", () => {
  test("every package of the lockfile that has an install script is named in package.json's allowScripts", () => {
    const lock = readJson<{ packages: Record<string, { hasInstallScript?: boolean }> }>('package-lock.json');
    const withScripts = Object.entries(lock.packages)
      .filter(([, entry]) => entry.hasInstallScript === true)
      .map(([location]) => location.slice(location.lastIndexOf('node_modules/') + 'node_modules/'.length));
    const { allowScripts = {} } = readJson<{ allowScripts?: Record<string, boolean> }>('package.json');
    expect(withScripts.length).toBeGreaterThan(0);
    expect([...new Set(withScripts)].filter((name) => !(name in allowScripts))).toEqual([]);
  });
});
