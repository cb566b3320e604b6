/**
 * Trial nu12, item 5: SIGTERM to `npx idempotent-event-flow simulate --serve` stopped only npx; the command it ran was
 * orphaned and went on serving. A serving command watches its parent (simulator/cli/parent-watch.ts) and stops as at
 * SIGTERM once the parent is gone. Here with real processes: a parent that starts a watching child, killed as npx is
 * (SIGKILL: nothing passed on), and the child ends by itself; and with an injected liveness, the watch's rules.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, test, vi } from 'vitest';
import { whenParentGone } from '../../simulator/cli/parent-watch';

const PROJECT = path.resolve(__dirname, '../..');
const directory = mkdtempSync(path.join(tmpdir(), 'ief-parent-watch-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

describe('a serving command whose parent ends (npx killed)', () => {
  test('the child notices its parent is gone and ends by itself', async () => {
    const stopped = path.join(directory, 'stopped');
    const child = path.join(directory, 'child.ts');
    writeFileSync(
      child,
      `import { whenParentGone } from ${JSON.stringify(path.join(PROJECT, 'simulator/cli/parent-watch'))};\n` +
        `import { writeFileSync } from 'node:fs';\n` +
        `const keepAlive = setInterval(() => undefined, 60_000);\n` +
        `process.stdout.write('watching\\n');\n` +
        `void whenParentGone({ everyMs: 50 }).then(() => { writeFileSync(${JSON.stringify(stopped)}, String(process.pid)); clearInterval(keepAlive); });\n`,
    );
    // the parent, as npx: starts the command and passes nothing on when it is killed
    const parent = spawn(process.execPath, ['-e', `const c = require('node:child_process').spawn(process.execPath, ['--import', 'tsx', ${JSON.stringify(child)}], { cwd: ${JSON.stringify(PROJECT)}, stdio: ['ignore', 'pipe', 'inherit'] }); c.stdout.pipe(process.stdout); setInterval(() => undefined, 60_000);`], { stdio: ['ignore', 'pipe', 'inherit'] });
    await new Promise<void>((resolve, reject) => {
      parent.stdout.on('data', (chunk: Buffer) => (chunk.toString().includes('watching') ? resolve() : undefined));
      parent.on('exit', () => reject(new Error('the parent ended before its child watched')));
    });
    expect(existsSync(stopped)).toBe(false);

    parent.kill('SIGKILL');

    // (the child's own process: node with tsx's loader, no wrapper between, as npx runs the command's node)
    await vi.waitFor(() => expect(existsSync(stopped)).toBe(true), { timeout: 20_000, interval: 50 });
    expect(Number(readFileSync(stopped, 'utf8'))).toBeGreaterThan(1);
  }, 30_000);

  test('with a live parent it does not resolve; without one (pid 1) it never watches', async () => {
    let looks = 0;
    const alive = whenParentGone({ parentPid: 4242, everyMs: 1, isAlive: () => (looks += 1) < 3 });
    await expect(alive).resolves.toBeUndefined();
    expect(looks).toBe(3);
    let watchedInit = false;
    void whenParentGone({ parentPid: 1, everyMs: 1, isAlive: () => ((watchedInit = true), false) });
    await vi.waitFor(() => expect(looks).toBe(3));
    expect(watchedInit).toBe(false);
  });
});
