/**
 * Trial nu12, item 5: SIGTERM to `npx idempotent-event-flow simulate --serve` stopped only npx; the command it ran was
 * orphaned and went on serving. A serving command watches its parent (simulator/cli/parent-watch.ts) and stops as at
 * SIGTERM once the parent is gone. Here with real processes: a parent that starts a watching child, killed as npx is
 * (SIGKILL: nothing passed on), and the child ends by itself; and with an injected liveness, the watch's rules.
 * Review r13: a serve started in the background by a shell that then ends (`nohup ... &`, a CI step) stopped about a
 * second later (R13-1): only a command npm started (npx, npm exec, an npm script) watches now; and SIGKILL to the real
 * npx left its `sh -c` as the serve's parent, so it served on (R13-2): the npm process above that shell is watched too.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, test, vi } from 'vitest';
import { startedByNpm, whenParentGone } from '../../simulator/cli/parent-watch';

const PROJECT = path.resolve(__dirname, '../..');
const directory = mkdtempSync(path.join(tmpdir(), 'ief-parent-watch-'));
/** What the tests started, each stopped at the end whatever the outcome: a failed or interrupted test leaves nothing running. */
const cleanups: Array<() => void> = [];
afterAll(() => {
  for (const cleanup of cleanups) cleanup();
  rmSync(directory, { recursive: true, force: true });
});

/** SIGKILL to `pid`, if it still runs one of this file's scripts (a pid the system gave to another process since is left). */
function stopProcess(pid: number | undefined): void {
  if (pid === undefined || !Number.isInteger(pid) || pid <= 1) return;
  try {
    if (!readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(directory)) return;
    process.kill(pid, 'SIGKILL');
  } catch {
    // already gone
  }
}

/** The pid a watching child wrote to `file` once it watched, if it did. */
const pidIn = (file: string): number | undefined => (existsSync(file) ? Number(readFileSync(file, 'utf8')) : undefined);

/** As npx runs a command: npm's environment (`npm_command`, `npm_lifecycle_event`) and nothing else of this run's. */
const NPX_ENV = { ...withoutNpm(process.env), npm_command: 'exec', npm_lifecycle_event: 'npx' };

function withoutNpm(environment: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(environment).filter(([name]) => !name.startsWith('npm_')));
}

/**
 * A watching child as serveRun watches (every 50 ms here): writes `<name>.started` (its pid) once watching, `<name>.stopped`
 * when the watch fires, and `<name>.serving` when it is still serving ten of its looks after it was orphaned.
 */
function watchingChild(name: string): { script: string; started: string; stopped: string; serving: string } {
  const [started, stopped, serving] = ['started', 'stopped', 'serving'].map((what) => path.join(directory, `${name}.${what}`)) as [string, string, string];
  const script = path.join(directory, `${name}.ts`);
  writeFileSync(
    script,
    `import { whenParentGone } from ${JSON.stringify(path.join(PROJECT, 'simulator/cli/parent-watch'))};\n` +
      `import { writeFileSync } from 'node:fs';\n` +
      `const keepAlive = setInterval(() => undefined, 60_000);\n` +
      `let stopped = false;\n` +
      `const first = process.ppid;\n` +
      `let looksSinceOrphaned = -1;\n` +
      `const look = setInterval(() => {\n` +
      `  if (looksSinceOrphaned < 0) { if (process.ppid !== first) looksSinceOrphaned = 0; return; }\n` +
      `  if ((looksSinceOrphaned += 1) === 10 && !stopped) writeFileSync(${JSON.stringify(serving)}, String(process.pid));\n` +
      `}, 50);\n` +
      `void whenParentGone({ everyMs: 50 }).then(() => { stopped = true; writeFileSync(${JSON.stringify(stopped)}, String(process.pid)); clearInterval(keepAlive); clearInterval(look); });\n` +
      `writeFileSync(${JSON.stringify(started)}, String(process.pid));\n`,
  );
  cleanups.push(() => stopProcess(pidIn(started)));
  return { script, started, stopped, serving };
}

const childCommand = (script: string): string => `${JSON.stringify(process.execPath)} --import tsx ${JSON.stringify(script)}`;

describe('a serving command whose parent ends (npx killed)', () => {
  test('the child notices its parent is gone and ends by itself', async () => {
    const stopped = path.join(directory, 'stopped');
    const child = path.join(directory, 'child.ts');
    writeFileSync(
      child,
      `import { whenParentGone } from ${JSON.stringify(path.join(PROJECT, 'simulator/cli/parent-watch'))};\n` +
        `import { writeFileSync } from 'node:fs';\n` +
        `const keepAlive = setInterval(() => undefined, 60_000);\n` +
        `writeFileSync(${JSON.stringify(`${child}.pid`)}, String(process.pid));\n` +
        `process.stdout.write('watching\\n');\n` +
        `void whenParentGone({ everyMs: 50 }).then(() => { writeFileSync(${JSON.stringify(stopped)}, String(process.pid)); clearInterval(keepAlive); });\n`,
    );
    // the parent, as npx: starts the command and passes nothing on when it is killed
    const parent = spawn(process.execPath, ['-e', `const c = require('node:child_process').spawn(process.execPath, ['--import', 'tsx', ${JSON.stringify(child)}], { cwd: ${JSON.stringify(PROJECT)}, stdio: ['ignore', 'pipe', 'inherit'] }); c.stdout.pipe(process.stdout); setInterval(() => undefined, 60_000);`], { stdio: ['ignore', 'pipe', 'inherit'], env: NPX_ENV });
    cleanups.push(() => (parent.kill('SIGKILL'), stopProcess(pidIn(`${child}.pid`))));
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

  test.each([
    { chain: 'npm -> the command', shell: false },
    { chain: 'npm -> sh -c -> the command (R13-2)', shell: true },
  ])('npx killed before the watch began (during the run, before serving), $chain: the watch still sees the npm process it started under, gone', async ({ shell }) => {
    const name = shell ? 'late-sh' : 'late';
    const [ready, go, stopped] = ['ready', 'go', 'stopped'].map((what) => path.join(directory, `${name}.${what}`)) as [string, string, string];
    const child = path.join(directory, `${name}.ts`);
    // the command: loaded (as the CLI is) under its parent, then busy (the simulation) until told to begin watching
    writeFileSync(
      child,
      `import { whenParentGone } from ${JSON.stringify(path.join(PROJECT, 'simulator/cli/parent-watch'))};\n` +
        `import { existsSync, writeFileSync } from 'node:fs';\n` +
        `const keepAlive = setInterval(() => undefined, 60_000);\n` +
        `writeFileSync(${JSON.stringify(ready)}, String(process.pid));\n` +
        `const wait = setInterval(() => {\n` +
        `  if (!existsSync(${JSON.stringify(go)})) return;\n` +
        `  clearInterval(wait);\n` +
        `  void whenParentGone({ everyMs: 50 }).then(() => { writeFileSync(${JSON.stringify(stopped)}, String(process.pid)); clearInterval(keepAlive); });\n` +
        `}, 20);\n`,
    );
    const start = shell ? `spawn('sh', ['-c', ${JSON.stringify(childCommand(child))}]` : `spawn(process.execPath, ['--import', 'tsx', ${JSON.stringify(child)}]`;
    const parent = spawn(process.execPath, ['-e', `require('node:child_process').${start}, { cwd: ${JSON.stringify(PROJECT)}, stdio: 'ignore' }); setInterval(() => undefined, 60_000);`], { stdio: 'ignore', env: NPX_ENV });
    cleanups.push(() => (parent.kill('SIGKILL'), stopProcess(pidIn(ready))));
    await vi.waitFor(() => expect(existsSync(ready)).toBe(true), { timeout: 20_000, interval: 50 });
    const parentOf = (pid: number): number => Number(readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')[1]);
    // the process npm started: the command, or the shell it runs the command with
    const started = shell ? parentOf(Number(readFileSync(ready, 'utf8'))) : Number(readFileSync(ready, 'utf8'));
    expect(parentOf(started)).toBe(parent.pid);

    parent.kill('SIGKILL');
    await vi.waitFor(() => expect(parentOf(started)).not.toBe(parent.pid), { timeout: 20_000, interval: 50 });
    writeFileSync(go, 'watch now');

    await vi.waitFor(() => expect(existsSync(stopped)).toBe(true), { timeout: 20_000, interval: 50 });
  }, 30_000);

  test("R13-2: npx's real chain (npm -> sh -c -> the command): SIGKILL to npm leaves sh alive, and the command still ends by itself", async () => {
    const child = watchingChild('chain');
    // the parent, as npm exec: runs the command through `sh -c`, passes nothing on when killed
    const npm = spawn(process.execPath, ['-e', `require('node:child_process').spawn('sh', ['-c', ${JSON.stringify(childCommand(child.script))}], { cwd: ${JSON.stringify(PROJECT)}, stdio: 'inherit' }); setInterval(() => undefined, 60_000);`], { stdio: 'inherit', env: NPX_ENV });
    cleanups.push(() => npm.kill('SIGKILL'));
    await vi.waitFor(() => expect(existsSync(child.started)).toBe(true), { timeout: 20_000, interval: 50 });
    const shell = Number(readFileSync(`/proc/${readFileSync(child.started, 'utf8')}/stat`, 'utf8').split(') ')[1]!.split(' ')[1]);
    expect(readFileSync(`/proc/${shell}/comm`, 'utf8').trim()).toBe('sh');

    npm.kill('SIGKILL');

    await vi.waitFor(() => expect(existsSync(child.stopped)).toBe(true), { timeout: 20_000, interval: 50 });
  }, 30_000);

  test('R13-1: started in the background by a shell that then ends (nohup ... &, a CI step), not by npm, it keeps serving', async () => {
    const child = watchingChild('nohup');
    // the step's shell: starts the serve in the background, waits until it serves, and ends
    const step = spawn('bash', ['-c', `nohup ${childCommand(child.script)} >/dev/null 2>&1 & while [ ! -s ${JSON.stringify(child.started)} ]; do sleep 0.05; done`], { cwd: PROJECT, stdio: 'inherit', env: withoutNpm(process.env) });
    await new Promise((resolve) => step.on('exit', resolve));
    try {
      await vi.waitFor(() => expect(existsSync(child.serving) || existsSync(child.stopped)).toBe(true), { timeout: 20_000, interval: 50 });
      expect({ serving: existsSync(child.serving), stopped: existsSync(child.stopped) }).toEqual({ serving: true, stopped: false });
    } finally {
      process.kill(Number(readFileSync(child.started, 'utf8')), 'SIGTERM');
    }
  }, 30_000);

  test("only a command npm started watches: npm's environment says so", () => {
    expect(startedByNpm({ npm_command: 'exec', npm_lifecycle_event: 'npx' })).toBe(true);
    expect(startedByNpm({ npm_lifecycle_event: 'serve' })).toBe(true);
    expect(startedByNpm({ PATH: '/usr/bin' })).toBe(false);
  });

  test('with a live parent it does not resolve; without one (pid 1) it never watches', async () => {
    let looks = 0;
    const alive = whenParentGone({ parentPid: 4242, underNpm: true, ancestors: [4242], everyMs: 1, isAlive: () => (looks += 1) < 3 });
    await expect(alive).resolves.toBeUndefined();
    expect(looks).toBe(3);
    let watchedInit = false;
    void whenParentGone({ parentPid: 1, underNpm: true, everyMs: 1, isAlive: () => ((watchedInit = true), false) });
    await vi.waitFor(() => expect(looks).toBe(3));
    expect(watchedInit).toBe(false);
  });
});
