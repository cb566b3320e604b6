/** The command-line flags every bench reads the same way: `--name value` or `--name=value`, each name known. */

/** Writes `problem` and the bench's `usage` to standard error and exits 2 (the benches' code for a usage error). */
export function usageError(problem: string, usage: string): never {
  process.stderr.write(`${problem}\n${usage}\n`);
  process.exit(2);
}

/** The values of `argv`'s flags by name; an unknown flag or one without a value is a usage error. */
export function readFlags(argv: readonly string[], names: readonly string[], usage: string): Record<string, string> {
  const values: Record<string, string> = {};
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    const match = /^--([a-z-]+)(?:=(.*))?$/.exec(arg);
    if (match === null || !names.includes(match[1] as string)) usageError(`unknown argument '${arg}'`, usage);
    const value = match[2] ?? argv[++i];
    if (value === undefined) usageError(`${arg} needs a value`, usage);
    values[match[1] as string] = value;
  }
  return values;
}
