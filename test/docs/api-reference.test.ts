/**
 * The API reference (docs/reference/, generated from the doc comments by scripts/api-reference.ts) is current, and
 * every export of the runtime entry point (lambda/index.ts) has its page.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, test } from 'vitest';

const REPO = path.resolve(__dirname, '..', '..');
const REFERENCE = path.join(REPO, 'docs', 'reference');

/** Every name lambda/index.ts exports (values and types), read from its export statements. */
function runtimeExports(): string[] {
  const source = fs.readFileSync(path.join(REPO, 'lambda', 'index.ts'), 'utf8');
  const names = new Set<string>();
  for (const match of source.matchAll(/export\s+(?:type\s+)?\{([^}]*)\}\s+from/g)) {
    for (const part of (match[1] as string).split(',')) {
      const name = part.trim().replace(/^type\s+/, '').split(/\s+as\s+/).pop()?.trim();
      if (name) names.add(name);
    }
  }
  return [...names].sort();
}

describe('docs/reference', () => {
  test('is what the doc comments generate (regenerate with npm run docs:reference)', () => {
    const output = execFileSync(process.execPath, [path.join(REPO, 'node_modules', 'tsx', 'dist', 'cli.mjs'), 'scripts/api-reference.ts', '--check'], {
      cwd: REPO,
      encoding: 'utf8',
    });
    expect(output).toMatch(/^docs\/reference is current \(\d+ pages\)/);
  }, 120_000);

  test('has a page for every export of idempotent-event-flow/runtime', () => {
    const exported = runtimeExports();
    expect(exported.length).toBeGreaterThan(80);
    const missing = exported.filter((name) => !fs.existsSync(path.join(REFERENCE, `idempotent-event-flow-runtime.${name.toLowerCase()}.md`)));
    expect(missing).toEqual([]);
  });
});
