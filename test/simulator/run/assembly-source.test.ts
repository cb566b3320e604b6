/**
 * The run's assembly: `--synth` (refreshAssembly) synthesizes into the project's cache, so the next run reads the
 * fresh assembly, not the stale one it replaced.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import type { Synthesizer } from '../../../simulator/model/assembly-cache';
import { runAssembly } from '../../../simulator/run/assembly-source';

let project: string;
let work: string;
let syntheses: number;
const synthesizer: Synthesizer = async ({ outputDirectory }) => {
  syntheses += 1;
  fs.mkdirSync(outputDirectory, { recursive: true });
  fs.writeFileSync(path.join(outputDirectory, 'manifest.json'), JSON.stringify({ synthesis: syntheses }));
};
const synthesisOf = (directory: string): unknown => JSON.parse(fs.readFileSync(path.join(directory, 'manifest.json'), 'utf8')).synthesis;

beforeEach(() => {
  project = fs.mkdtempSync(path.join(os.tmpdir(), 'ief-assembly-source-'));
  fs.mkdirSync(path.join(project, 'node_modules'));
  fs.writeFileSync(path.join(project, 'app.ts'), 'export {};\n');
  fs.utimesSync(path.join(project, 'app.ts'), new Date('2026-01-01T00:00:00Z'), new Date('2026-01-01T00:00:00Z'));
  work = fs.mkdtempSync(path.join(os.tmpdir(), 'ief-assembly-work-'));
  syntheses = 0;
});
afterEach(() => {
  fs.rmSync(project, { recursive: true, force: true });
  fs.rmSync(work, { recursive: true, force: true });
});

describe('runAssembly', () => {
  test('--synth synthesizes into the cache: the next run reads the new assembly, not the one before it', async () => {
    const first = await runAssembly({ cwd: project, reuseAssembly: true }, work, synthesizer);
    expect(await runAssembly({ cwd: project, reuseAssembly: true }, work, synthesizer)).toBe(first);

    const refreshed = await runAssembly({ cwd: project, reuseAssembly: true, refreshAssembly: true }, work, synthesizer);
    const next = await runAssembly({ cwd: project, reuseAssembly: true }, work, synthesizer);

    expect(synthesisOf(refreshed)).toBe(2);
    expect(next).toBe(refreshed);
    expect(syntheses).toBe(2);
  });

  test("the run's log and its other outputs written into the project leave the next run reading the cached assembly", async () => {
    const options = { cwd: project, reuseAssembly: true, logFile: 'run.jsonl', outputs: { outputFiles: [path.join(project, 'out', 'result.json')] } };
    const first = await runAssembly(options, work, synthesizer);
    fs.mkdirSync(path.join(project, 'out'));
    for (const file of ['run.jsonl', 'out/result.json']) fs.writeFileSync(path.join(project, file), 'written after the synthesis\n');

    let reused: boolean | undefined;
    expect(await runAssembly({ ...options, onAssembly: (source) => (reused = source.reused) }, work, synthesizer)).toBe(first);
    expect(reused).toBe(true);
    expect(syntheses).toBe(1);
  });

  test('without the cache it synthesizes into the run\'s directory; an assembly directory given is read as it is', async () => {
    await expect(runAssembly({ cwd: project }, work, synthesizer)).resolves.toBe(path.join(work, 'cdk.out'));
    await expect(runAssembly({ cwd: project, assemblyDirectory: 'cdk.out.given' }, work, synthesizer)).resolves.toBe(path.join(project, 'cdk.out.given'));
  });
});
