/**
 * A tiny structured logger: one JSON object per line with `level`, `message`, `timestamp` and context fields.
 * No dependencies, so it adds nothing to the bundle.
 */
import { redactedError } from './redact';

/** Severity of a log line. */
export type LogLevel = 'DEBUG' | 'INFO' | 'WARN' | 'ERROR';

/** Context fields added to every line (subscriber, eventId, eventType, sqsMessageId, ...). */
export type LogContext = Readonly<Record<string, unknown>>;

/** Where finished lines go; defaults to standard output. */
export type LogSink = (line: string) => void;

/** Writes structured JSON lines. */
export interface Logger {
  debug(message: string, fields?: LogContext): void;
  info(message: string, fields?: LogContext): void;
  warn(message: string, fields?: LogContext): void;
  error(message: string, fields?: LogContext): void;
  /** A logger that adds `context` to every line, on top of this logger's own context. */
  child(context: LogContext): Logger;
}

/** The order of the levels: a logger writes its level and those after it. */
const LEVEL_ORDER: Readonly<Record<LogLevel, number>> = { DEBUG: 0, INFO: 1, WARN: 2, ERROR: 3 };

/** Lambda's application log levels (`AWS_LAMBDA_LOG_LEVEL`) mapped onto this logger's. */
const LAMBDA_LOG_LEVELS: Readonly<Record<string, LogLevel>> = { TRACE: 'DEBUG', DEBUG: 'DEBUG', INFO: 'INFO', WARN: 'WARN', ERROR: 'ERROR', FATAL: 'ERROR' };

/** The environment variable Lambda sets to a function's application log level (`LoggingConfig.ApplicationLogLevel`). */
export const LOG_LEVEL_ENVIRONMENT_VARIABLE = 'AWS_LAMBDA_LOG_LEVEL';

/**
 * The level of `AWS_LAMBDA_LOG_LEVEL` (`TRACE` counts as DEBUG, `FATAL` as ERROR), or INFO when it is unset or not a
 * level. Lambda sets it from the function's application log level (the constructs' `applicationLogLevel`).
 */
export function logLevelFromEnvironment(env: Readonly<Record<string, string | undefined>> = process.env): LogLevel {
  return LAMBDA_LOG_LEVELS[(env[LOG_LEVEL_ENVIRONMENT_VARIABLE] ?? '').trim().toUpperCase()] ?? 'INFO';
}

/** Options of {@link createLogger}. */
export interface LoggerOptions {
  /** Fields added to every line. @default no fields */
  readonly context?: LogContext;
  /** Receives each finished line (without the newline). @default writes the line to standard output */
  readonly sink?: LogSink;
  /** Clock for `timestamp`. @default the system clock */
  readonly now?: () => Date;
  /** The lowest level written; lines below it cost nothing. @default `logLevelFromEnvironment()`: INFO unless Lambda says otherwise */
  readonly level?: LogLevel;
}

const stdoutSink: LogSink = (line) => {
  process.stdout.write(`${line}\n`);
};

/** Turns an error into plain JSON fields (name, message, cause chain); leaves other values as they are. */
export function serializeError(value: unknown, depth = 0): unknown {
  if (!(value instanceof Error)) return value;
  const serialized: Record<string, unknown> = { name: value.name, message: value.message };
  if (value.cause !== undefined && depth < 3) serialized.cause = serializeError(value.cause, depth + 1);
  return serialized;
}

function stringify(record: Record<string, unknown>): string {
  try {
    return JSON.stringify(record, (_key, value: unknown) => (typeof value === 'bigint' ? value.toString() : serializeError(value)));
  } catch {
    // a circular field must not turn a log call into a crash
    return JSON.stringify({ level: record.level, message: record.message, timestamp: record.timestamp, logError: 'unserializable fields' });
  }
}

/**
 * A logger that writes through `logger`, with every error among the fields (and its `cause` chain) reduced to its name
 * and its message redacted ({@link redactedError}): what a consumer logs unless `logPayloadValues` is set.
 */
export function redactingLogger(logger: Logger): Logger {
  const redact = (fields: LogContext | undefined): LogContext | undefined =>
    fields === undefined ? undefined : Object.fromEntries(Object.entries(fields).map(([key, value]) => [key, redactedError(value)]));
  return {
    debug: (message, fields) => logger.debug(message, redact(fields)),
    info: (message, fields) => logger.info(message, redact(fields)),
    warn: (message, fields) => logger.warn(message, redact(fields)),
    error: (message, fields) => logger.error(message, redact(fields)),
    child: (context) => redactingLogger(logger.child(context)),
  };
}

/** Creates a structured JSON logger. */
export function createLogger(options: LoggerOptions = {}): Logger {
  const sink = options.sink ?? stdoutSink;
  const now = options.now ?? (() => new Date());
  const context = options.context ?? {};
  const threshold = options.level ?? logLevelFromEnvironment();
  const lowest = LEVEL_ORDER[threshold];
  const write = (level: LogLevel, message: string, fields: LogContext = {}): void => {
    if (LEVEL_ORDER[level] < lowest) return;
    sink(stringify({ level, message, timestamp: now().toISOString(), ...context, ...fields }));
  };
  return {
    debug: (message, fields) => write('DEBUG', message, fields),
    info: (message, fields) => write('INFO', message, fields),
    warn: (message, fields) => write('WARN', message, fields),
    error: (message, fields) => write('ERROR', message, fields),
    child: (extra) => createLogger({ sink, now, level: threshold, context: { ...context, ...extra } }),
  };
}
