/**
 * Where a run's cloud assembly comes from: the directory the caller gave (`--assembly`), the project's assembly cache
 * (simulator/model/assembly-cache.ts: read again while nothing that can change it changed; `refreshAssembly`, the
 * CLI's `--synth`, synthesizes into the cache anyway, so the next run reads the fresh one), or a synthesis into the
 * run's own temporary directory.
 */
import * as path from 'node:path';
import { synthesizeOrReuse, type Synthesizer } from '../model/assembly-cache';
import type { RunOutputs } from '../model/run-outputs';
import { synthesize } from '../model/synthesize';
import type { SimulationOptions } from './options';

/** The options that choose the assembly. */
export type AssemblyOptions = Pick<SimulationOptions, 'cwd' | 'app' | 'assemblyDirectory' | 'reuseAssembly' | 'refreshAssembly' | 'onAssembly' | 'logFile' | 'outputs'>;

/** What the run writes into the project, none of it a source of the app: its log, and the caller's `outputs`. */
export function runOutputs(options: Pick<SimulationOptions, 'cwd' | 'logFile' | 'outputs'>): Required<RunOutputs> {
  const given = options.outputs?.outputFiles ?? [];
  const files = options.logFile === undefined ? given : [options.logFile, ...given];
  return { outputFiles: files.map((file) => path.resolve(options.cwd, file)), outputDescriptors: options.outputs?.outputDescriptors ?? [] };
}

/** The run's assembly directory; `workDirectory` is the run's temporary directory. */
export async function runAssembly(options: AssemblyOptions, workDirectory: string, synthesizer: Synthesizer = synthesize): Promise<string> {
  if (options.assemblyDirectory !== undefined) return path.resolve(options.cwd, options.assemblyDirectory);
  const app = options.app === undefined ? {} : { app: options.app };
  if (options.reuseAssembly === true) {
    const source = await synthesizeOrReuse({ cwd: options.cwd, ...app, ...runOutputs(options), force: options.refreshAssembly === true, synthesizer });
    options.onAssembly?.(source);
    return source.directory;
  }
  const synthesizedAt = Date.now();
  const outputDirectory = path.join(workDirectory, 'cdk.out');
  await synthesizer({ cwd: options.cwd, outputDirectory, ...app });
  options.onAssembly?.({ directory: outputDirectory, reused: false, synthesizedAt });
  return outputDirectory;
}
