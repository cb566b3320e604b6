/**
 * The reused cloud assembly: read again while it is newer than every source of the app and made by the same app
 * command; synthesized again after a source changed, for another app command, or when forced; two runs synthesizing
 * at once each keep a whole assembly of their own.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { assemblyCacheRoot, assemblyKey, cachedAssemblyDirectory as cachedFor, newestSource, recordOutputs, synthesizeOrReuse, type Synthesizer } from '../../../simulator/model/assembly-cache';
import { NoAppError } from '../../../simulator/model/synthesize';

let project: string;
let cache: string;

/** The assembly the project's cache points at for its app (without --app) as it is now. */
function cachedAssemblyDirectory(cwd: string): string | undefined {
  return cachedFor(cwd, assemblyKey({ cwd }));
}

/**
 * A project whose cache holds an assembly stamped `synthesizedAt` by `app`, for the project and environment as they
 * are; its one source was modified at `sourceAt`.
 */
function projectWith(stamp: { app: string | null; synthesizedAt: number }, sourceAt: number): void {
  fs.mkdirSync(path.join(project, 'node_modules'));
  fs.mkdirSync(path.join(project, 'lib'));
  const source = path.join(project, 'lib', 'stack.ts');
  fs.writeFileSync(source, 'export {};\n');
  fs.utimesSync(source, new Date(sourceAt), new Date(sourceAt));
  cache = path.join(assemblyCacheRoot(project), 'assemblies', 'earlier');
  fs.mkdirSync(cache, { recursive: true });
  fs.writeFileSync(path.join(cache, 'manifest.json'), '{}');
  const key = assemblyKey({ cwd: project, ...(stamp.app === null ? {} : { app: stamp.app }) });
  fs.writeFileSync(path.join(cache, 'ief-assembly.json'), JSON.stringify({ ...stamp, key }));
  fs.writeFileSync(path.join(assemblyCacheRoot(project), `current-${key}.json`), JSON.stringify({ directory: 'earlier' }));
}

/** A synthesis that writes its assembly file by file, pausing between them, as `cdk synth` does over seconds. */
function slowSynthesizer(files: number, tag: string): Synthesizer {
  return async ({ outputDirectory }) => {
    for (let index = 0; index < files; index += 1) {
      fs.writeFileSync(path.join(outputDirectory, `asset-${index}.js`), `// ${tag} ${index}\n`);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    fs.writeFileSync(path.join(outputDirectory, 'manifest.json'), JSON.stringify({ tag }));
  };
}

beforeEach(() => {
  project = fs.mkdtempSync(path.join(os.tmpdir(), 'ief-assembly-cache-'));
});
afterEach(() => {
  fs.rmSync(project, { recursive: true, force: true });
});

describe('synthesizeOrReuse', () => {
  test('reads the assembly again while it is newer than every source, and says which source is the newest', async () => {
    projectWith({ app: null, synthesizedAt: Date.parse('2026-01-02T00:00:00Z') }, Date.parse('2026-01-01T00:00:00Z'));

    const source = await synthesizeOrReuse({ cwd: project });

    expect(source).toMatchObject({ directory: cache, reused: true, synthesizedAt: Date.parse('2026-01-02T00:00:00Z') });
    expect(source.newestSource?.file).toBe(path.join(project, 'lib', 'stack.ts'));
    expect(cache.startsWith(path.join(project, 'node_modules', '.cache'))).toBe(true);
  });

  test('two runs synthesizing at once each get a whole assembly that stays as it was, and the cache points at one of them', async () => {
    projectWith({ app: null, synthesizedAt: Date.parse('2026-01-01T00:00:00Z') }, Date.parse('2026-01-02T00:00:00Z'));

    const [first, second] = await Promise.all([
      synthesizeOrReuse({ cwd: project, synthesizer: slowSynthesizer(20, 'first') }),
      synthesizeOrReuse({ cwd: project, synthesizer: slowSynthesizer(20, 'second') }),
    ]);

    expect(first.directory).not.toBe(second.directory);
    for (const [run, tag] of [[first, 'first'], [second, 'second']] as const) {
      expect(run.reused).toBe(false);
      expect(JSON.parse(fs.readFileSync(path.join(run.directory, 'manifest.json'), 'utf8'))).toEqual({ tag });
      expect(fs.readdirSync(run.directory).filter((name) => name.startsWith('asset-'))).toHaveLength(20);
      expect(fs.readFileSync(path.join(run.directory, 'asset-19.js'), 'utf8')).toBe(`// ${tag} 19\n`);
    }
    expect([first.directory, second.directory]).toContain(cachedAssemblyDirectory(project));
    // the next run reads the one the cache points at
    await expect(synthesizeOrReuse({ cwd: project })).resolves.toMatchObject({ reused: true, directory: cachedAssemblyDirectory(project) });
  });

  test('a failed synthesis leaves the cache as it was', async () => {
    projectWith({ app: null, synthesizedAt: Date.parse('2026-01-01T00:00:00Z') }, Date.parse('2026-01-02T00:00:00Z'));
    const failing: Synthesizer = async ({ outputDirectory }) => {
      fs.writeFileSync(path.join(outputDirectory, 'half.json'), '{');
      throw new Error('the app threw');
    };
    await expect(synthesizeOrReuse({ cwd: project, synthesizer: failing })).rejects.toThrow('the app threw');
    expect(cachedAssemblyDirectory(project)).toBe(cache);
    expect(fs.readdirSync(path.join(assemblyCacheRoot(project), 'assemblies'))).toEqual(['earlier']);
  });

  test('without a node_modules the cache is this user\'s, never the shared temporary directory', () => {
    const root = assemblyCacheRoot(project);
    expect(root.startsWith(os.tmpdir())).toBe(false);
    expect(root.startsWith(process.env.XDG_CACHE_HOME ?? path.join(os.homedir(), '.cache'))).toBe(true);
  });

  // without a cdk.json the synthesis fails at once, naming the missing app: proof that it was attempted
  test('synthesizes again once a source is newer than the assembly', async () => {
    projectWith({ app: null, synthesizedAt: Date.parse('2026-01-01T00:00:00Z') }, Date.parse('2026-01-02T00:00:00Z'));
    await expect(synthesizeOrReuse({ cwd: project })).rejects.toBeInstanceOf(NoAppError);
  });

  test('synthesizes again for another app command, and when forced', async () => {
    projectWith({ app: 'npx tsx bin/a.ts', synthesizedAt: Date.parse('2026-01-02T00:00:00Z') }, Date.parse('2026-01-01T00:00:00Z'));
    await expect(synthesizeOrReuse({ cwd: project, app: 'npx tsx bin/a.ts' })).resolves.toMatchObject({ reused: true });
    await expect(synthesizeOrReuse({ cwd: project })).rejects.toBeInstanceOf(NoAppError);
    await expect(synthesizeOrReuse({ cwd: project, app: 'npx tsx bin/a.ts', force: true })).rejects.toThrow(/synth/);
  });

  test('two runs of one app with different environments each use their own assembly; a third with the first environment reads the first again', async () => {
    // GIVEN an app whose synthesis depends on an environment variable (e.g. a stage that changes its permissions)
    projectWith({ app: null, synthesizedAt: Date.parse('2026-01-02T00:00:00Z') }, Date.parse('2026-01-01T00:00:00Z'));
    const variantSynthesizer: Synthesizer = async ({ outputDirectory }) => {
      fs.writeFileSync(path.join(outputDirectory, 'manifest.json'), JSON.stringify({ variant: process.env.IEF_TEST_VARIANT ?? 'none' }));
    };
    const variantOf = (source: { directory: string }): unknown => JSON.parse(fs.readFileSync(path.join(source.directory, 'manifest.json'), 'utf8')).variant;
    const run = async (variant: string | undefined) => {
      if (variant === undefined) delete process.env.IEF_TEST_VARIANT;
      else process.env.IEF_TEST_VARIANT = variant;
      try {
        return await synthesizeOrReuse({ cwd: project, app: 'npx tsx bin/a.ts', synthesizer: variantSynthesizer });
      } finally {
        delete process.env.IEF_TEST_VARIANT;
      }
    };

    const withVariable = await run('restricted');
    const without = await run(undefined);
    const withAgain = await run('restricted');

    expect(variantOf(withVariable)).toBe('restricted');
    expect(without.reused).toBe(false);
    expect(variantOf(without)).toBe('none');
    expect(withAgain).toMatchObject({ reused: true, directory: withVariable.directory });
  });

  test('a changed cdk.json, or a source put back with an older modification time, makes the next run synthesize again', async () => {
    projectWith({ app: null, synthesizedAt: Date.parse('2026-01-02T00:00:00Z') }, Date.parse('2026-01-01T00:00:00Z'));
    const synthesizer: Synthesizer = async ({ outputDirectory }) => fs.writeFileSync(path.join(outputDirectory, 'manifest.json'), '{}');
    const first = await synthesizeOrReuse({ cwd: project, synthesizer });
    await expect(synthesizeOrReuse({ cwd: project, synthesizer })).resolves.toMatchObject({ reused: true, directory: first.directory });

    // a file restored from an archive keeps its old modification time
    const restored = path.join(project, 'lib', 'grants.ts');
    fs.writeFileSync(restored, 'export {};\n');
    fs.utimesSync(restored, new Date('2025-01-01T00:00:00Z'), new Date('2025-01-01T00:00:00Z'));
    const second = await synthesizeOrReuse({ cwd: project, synthesizer });
    expect(second.reused).toBe(false);
    fs.writeFileSync(path.join(project, 'cdk.json'), JSON.stringify({ app: 'npx tsx bin/a.ts', context: { stage: 'prod' } }));
    fs.utimesSync(path.join(project, 'cdk.json'), new Date('2025-01-01T00:00:00Z'), new Date('2025-01-01T00:00:00Z'));
    await expect(synthesizeOrReuse({ cwd: project, synthesizer })).resolves.toMatchObject({ reused: false });
  });

  test('forced, it synthesizes and the next run reads what it synthesized (--synth refreshes the cache)', async () => {
    projectWith({ app: null, synthesizedAt: Date.parse('2026-01-02T00:00:00Z') }, Date.parse('2026-01-01T00:00:00Z'));
    const synthesizer: Synthesizer = async ({ outputDirectory }) => fs.writeFileSync(path.join(outputDirectory, 'manifest.json'), '{"fresh":true}');
    const first = await synthesizeOrReuse({ cwd: project, synthesizer });

    const forced = await synthesizeOrReuse({ cwd: project, synthesizer, force: true });

    expect(forced.reused).toBe(false);
    expect(forced.directory).not.toBe(first.directory);
    await expect(synthesizeOrReuse({ cwd: project, synthesizer })).resolves.toMatchObject({ reused: true, directory: forced.directory });
  });

  test("the run's own outputs are no sources: its --json and --log, and the file its stdout is redirected to, written after a synthesis, leave the next run reading it", async () => {
    // GIVEN a project whose run writes its result, its log and its redirected stdout into the project root
    fs.mkdirSync(path.join(project, 'node_modules'));
    fs.writeFileSync(path.join(project, 'app.ts'), 'export {};\n');
    fs.utimesSync(path.join(project, 'app.ts'), new Date('2026-01-01T00:00:00Z'), new Date('2026-01-01T00:00:00Z'));
    const synthesizer: Synthesizer = async ({ outputDirectory }) => fs.writeFileSync(path.join(outputDirectory, 'manifest.json'), '{}');
    const redirected = fs.openSync(path.join(project, 'run.txt'), 'w');
    try {
      const outputs = { outputFiles: ['result.json', path.join(project, 'logs', 'run.jsonl')], outputDescriptors: [redirected] };
      const written = (file: string, at: string): void => {
        fs.mkdirSync(path.dirname(path.join(project, file)), { recursive: true });
        fs.writeFileSync(path.join(project, file), at);
        fs.utimesSync(path.join(project, file), new Date(at), new Date(at));
      };
      const first = await synthesizeOrReuse({ cwd: project, synthesizer, ...outputs });
      expect(first.reused).toBe(false);
      // WHEN the run writes its outputs after its synthesis (later than the assembly), and a second run starts
      const later = new Date(first.synthesizedAt + 60_000).toISOString();
      written('result.json', later);
      written('logs/run.jsonl', later);
      fs.writeSync(redirected, `OK ${later}\n`);
      fs.utimesSync(path.join(project, 'run.txt'), new Date(later), new Date(later));
      const second = await synthesizeOrReuse({ cwd: project, synthesizer, ...outputs });

      // THEN it reads the first run's assembly, and names no output as the newest source
      expect(second).toMatchObject({ reused: true, directory: first.directory, newestSource: { file: path.join(project, 'app.ts') } });
      expect(newestSource(project, outputs)?.file).toBe(path.join(project, 'app.ts'));
      // and the same file written by anything else is a source: the next run without those outputs synthesizes
      const third = await synthesizeOrReuse({ cwd: project, synthesizer });
      expect(third.reused).toBe(false);
      expect(third.newestSource?.file).not.toBe(path.join(project, 'app.ts'));
    } finally {
      fs.closeSync(redirected);
    }
  });

  test("an earlier run's recorded outputs are no sources while they are as it left them: seeds writing seed-1.json, seed-2.json read one assembly", async () => {
    fs.mkdirSync(path.join(project, 'node_modules'));
    fs.writeFileSync(path.join(project, 'app.ts'), 'export {};\n');
    fs.utimesSync(path.join(project, 'app.ts'), new Date('2026-01-01T00:00:00Z'), new Date('2026-01-01T00:00:00Z'));
    const synthesizer: Synthesizer = async ({ outputDirectory }) => fs.writeFileSync(path.join(outputDirectory, 'manifest.json'), '{}');
    const first = await synthesizeOrReuse({ cwd: project, synthesizer, outputFiles: ['seed-1.json'] });
    // the first seed writes its result and its redirected stdout, and records them once done
    fs.writeFileSync(path.join(project, 'seed-1.json'), '{"seed":"1"}\n');
    const stdout = fs.openSync(path.join(project, 'seed-1.txt'), 'w');
    try {
      fs.writeSync(stdout, 'OK\n');
      recordOutputs(project, { outputFiles: ['seed-1.json'], outputDescriptors: [stdout] });
    } finally {
      fs.closeSync(stdout);
    }

    // the second seed, with outputs of its own, reads the first seed's assembly
    const second = await synthesizeOrReuse({ cwd: project, synthesizer, outputFiles: ['seed-2.json'] });
    expect(second).toMatchObject({ reused: true, directory: first.directory, newestSource: { file: path.join(project, 'app.ts') } });

    // a recorded output changed since (one byte more) is a source again: the next run synthesizes
    fs.appendFileSync(path.join(project, 'seed-1.txt'), '!');
    const third = await synthesizeOrReuse({ cwd: project, synthesizer });
    expect(third).toMatchObject({ reused: false, newestSource: { file: path.join(project, 'seed-1.txt') } });
  });

  test('the sources leave out dependencies, outputs and hidden directories', () => {
    projectWith({ app: null, synthesizedAt: 0 }, Date.parse('2026-01-01T00:00:00Z'));
    const later = Date.parse('2026-06-01T00:00:00Z');
    for (const ignored of ['node_modules/pkg/index.js', 'cdk.out/manifest.json', 'cdk.out.old/x.json', '.git/HEAD', 'dist/index.js']) {
      const file = path.join(project, ignored);
      fs.mkdirSync(path.dirname(file), { recursive: true });
      fs.writeFileSync(file, 'x');
      fs.utimesSync(file, new Date(later), new Date(later));
    }
    expect(newestSource(project)).toEqual({ file: path.join(project, 'lib', 'stack.ts'), modifiedAt: Date.parse('2026-01-01T00:00:00Z') });
  });
});
