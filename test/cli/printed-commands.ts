/**
 * Running what `simulate --serve` prints: its command lines (quoted for a shell), in-process with the printed
 * environment, and waiting for the served run's output. Shared by the served-run tests.
 */
import { execFileSync } from 'node:child_process';
import { expect } from 'vitest';
import { main } from '../../simulator/cli/main';

/** The words of a shell command line, as bash splits and unquotes them (the printed commands are for a shell). */
export function shellWords(line: string): string[] {
  return execFileSync('bash', ['-c', `printf '%s\\0' ${line}`], { encoding: 'utf8' }).split('\0').slice(0, -1);
}

/** Runs a printed command line (`npx idempotent-event-flow ...`, words quoted for a shell) in-process with the printed environment. */
export async function runPrinted(line: string, environment: Readonly<Record<string, string>>): Promise<{ code: number; stdout: string; stderr: string }> {
  const [npx, program, ...argv] = shellWords(line.trim());
  expect([npx, program]).toEqual(['npx', 'idempotent-event-flow']);
  const saved = Object.fromEntries(Object.keys(environment).map((name) => [name, process.env[name]]));
  Object.assign(process.env, environment);
  let stdout = '';
  let stderr = '';
  try {
    const code = await main(argv, { stdout: (text) => void (stdout += text), stderr: (text) => void (stderr += text) });
    return { code, stdout, stderr };
  } finally {
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  }
}

export async function waitFor(condition: () => boolean, what: string, timeoutMs = 600_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** A served run's output up to the moment it serves, and the credentials its `export` line prints. */
export interface ServedRun {
  readonly stdout: string;
  readonly stderr: string;
  /** `AWS_ACCESS_KEY_ID` and `AWS_SECRET_ACCESS_KEY`, as the run prints them for the operator's shell. */
  readonly environment: Readonly<Record<string, string>>;
}

/**
 * Runs `argv` (a `simulate ... --serve` command line, without the program name) in-process from `cwd`, waits until it
 * serves, hands what it printed to `use`, then stops the run and waits for it to end. Fails, with the run's output, if
 * the run ended without serving.
 */
export async function whileServed<T>(argv: readonly string[], cwd: string, use: (served: ServedRun) => Promise<T>): Promise<T> {
  let stdout = '';
  let stderr = '';
  const stop = new AbortController();
  const running = main([...argv], { stdout: (text) => void (stdout += text), stderr: (text) => void (stderr += text), cwd, stopSignal: stop.signal });
  let finished = false;
  void running.finally(() => (finished = true));
  try {
    await waitFor(() => stdout.includes('serving until') || finished, 'the run to serve');
    const exported = /^export (AWS_ACCESS_KEY_ID=\S+) (AWS_SECRET_ACCESS_KEY=\S+)$/m.exec(stdout);
    if (!exported) throw new Error(`the run ended without serving:\n${stdout}${stderr}`);
    const environment = Object.fromEntries(exported.slice(1).map((pair) => pair.split('=') as [string, string]));
    return await use({ stdout, stderr, environment });
  } finally {
    stop.abort();
    await running;
  }
}
