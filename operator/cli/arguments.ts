/** Parsing of option values shared by the operator commands. */

const UNIT_SECONDS: Readonly<Record<string, number>> = { s: 1, m: 60, h: 3600, d: 86_400 };

/** A duration such as `30d`, `12h`, `90m`, `3600s` or `3600` (seconds), in whole seconds; or the problem with it. */
export function parseDurationSeconds(value: string, option: string): number | string {
  const match = /^(\d+)([smhd]?)$/.exec(value.trim());
  const seconds = match === null ? Number.NaN : Number(match[1]) * (UNIT_SECONDS[match[2] || 's'] as number);
  if (!Number.isSafeInteger(seconds) || seconds <= 0) return `--${option} must be a positive duration such as 30d, 12h, 90m or 3600s, but '${value}' was given`;
  return seconds;
}

/** A time given as ISO-8601 (`2024-05-01T12:00:00Z`), in epoch ms; or the problem with it. */
export function parseTime(value: string, option: string): number | string {
  const parsed = Date.parse(value);
  return /^\d{4}-\d{2}-\d{2}/.test(value) && Number.isFinite(parsed) ? parsed : `--${option} must be an ISO-8601 time such as 2024-05-01T12:00:00Z, but '${value}' was given`;
}

/** A whole number of at least 1; or the problem with it. */
export function parsePositiveInteger(value: string, option: string): number | string {
  const parsed = Number(value);
  return /^\d+$/.test(value) && Number.isSafeInteger(parsed) && parsed > 0 ? parsed : `--${option} must be a whole number of at least 1, but '${value}' was given`;
}

/** The values of a repeatable string option. */
export function listOption(values: Readonly<Record<string, unknown>>, name: string): string[] {
  const value = values[name];
  if (value === undefined) return [];
  return (Array.isArray(value) ? value : [value]).filter((item): item is string => typeof item === 'string');
}

/** `word` as one shell word: as is when it needs no quoting, else in single quotes. */
export function shellWord(word: string): string {
  return /^[\w./:=@+,-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/** A duration of whole seconds as `--deduplication-window` and the other duration options take it: `30d`, `12h`, `90m`, `45s`. */
export function formatDurationOption(seconds: number): string {
  for (const [unit, size] of [['d', 86_400], ['h', 3600], ['m', 60]] as const) if (seconds % size === 0) return `${seconds / size}${unit}`;
  return `${seconds}s`;
}
