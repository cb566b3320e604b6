/**
 * `npm run test:mutants`: applies each planted mutation of lambda/ (mutants.ts) alone, runs its test files, and
 * reports whether they caught it (a failing run kills the mutant). The source is restored after each, and on Ctrl-C.
 * The model of an event's whole life runs with IEF_LIFE_RUNS=30 per mode here.
 * Exit code 0 only when every mutant was killed. `-- <id> ...` runs only those mutants. The model-based tests run with
 * IEF_MODEL_RUNS=40 here (a longer search than in `npm test`), unless the environment sets it.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { MUTANTS, type Mutant } from './mutants';

const root = path.resolve(import.meta.dirname, '..', '..');
const only = new Set(process.argv.slice(2));
/** `IEF_MUTANT_TESTS=<file>,...`: run these test files against each mutant instead of its own (e.g. the model alone). */
const testsOverride = process.env.IEF_MUTANT_TESTS?.split(',').filter((file) => file !== '');
const selected = MUTANTS.filter((mutant) => only.size === 0 || only.has(mutant.id));
/** The files a mutant changed, with their original text. */
let pending: Array<{ file: string; original: string }> = [];

const restore = (): void => {
  for (const { file, original } of pending.reverse()) writeFileSync(file, original);
  pending = [];
};
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    restore();
    process.exit(130);
  });
}

function apply(mutant: Mutant): void {
  for (const edit of [mutant, ...(mutant.also ?? [])]) {
    const file = path.join(root, edit.file);
    const original = readFileSync(file, 'utf8');
    const occurrences = original.split(edit.find).length - 1;
    if (occurrences !== 1) {
      restore();
      throw new Error(`mutant '${mutant.id}': its code occurs ${occurrences} times in ${edit.file}, not once; update scripts/mutants/mutants.ts`);
    }
    pending.push({ file, original });
    writeFileSync(file, original.replace(edit.find, edit.replace));
  }
}

/** Each mutant's full test output (the shrunk command sequence and the run's history, when the model caught it). */
const logs = path.join(tmpdir(), 'ief-mutants');
mkdirSync(logs, { recursive: true });
const results: Array<{ mutant: Mutant; killed: boolean; seconds: number; evidence: string }> = [];
for (const mutant of selected) {
  const started = Date.now();
  apply(mutant);
  let run;
  try {
    run = spawnSync('npx', ['vitest', 'run', '--bail=1', '--reporter=dot', ...(testsOverride ?? mutant.tests)], {
      cwd: root,
      encoding: 'utf8',
      timeout: 600_000,
      env: { ...process.env, IEF_MODEL_RUNS: process.env.IEF_MODEL_RUNS ?? '40', IEF_LIFE_RUNS: process.env.IEF_LIFE_RUNS ?? '30' },
    });
  } finally {
    restore();
  }
  const output = `${run.stdout}\n${run.stderr}`;
  writeFileSync(path.join(logs, `${mutant.id}.log`), output);
  const killed = run.status !== 0;
  const evidence = killed ? (output.match(/(event [^\n]{0,200}|AssertionError[^\n]{0,200}|FAIL [^\n]{0,200})/)?.[0] ?? `exit ${run.status ?? run.signal}`) : 'every test passed';
  const seconds = Math.round((Date.now() - started) / 1000);
  results.push({ mutant, killed, seconds, evidence });
  console.log(`${killed ? 'killed  ' : 'SURVIVED'} ${mutant.id} (${seconds} s): ${evidence.replace(/\x1b\[[0-9;]*m/g, '')}`);
}
const killed = results.filter((result) => result.killed).length;
console.log(`\nmutants: ${killed} of ${results.length} killed (test output of each in ${logs})`);
process.exit(killed === results.length ? 0 : 1);
