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

/** True when one of `fields` is an Error, the only values {@link redactedError} changes. */
function hasError(fields: LogContext): boolean {
  for (const key in fields) if (fields[key] instanceof Error) return true;
  return false;
}

/** See {@link redactingLogger}. */
class RedactingLogger implements Logger {
  public constructor(private readonly logger: Logger) {}

  public debug(message: string, fields?: LogContext): void {
    this.logger.debug(message, redactFields(fields));
  }

  public info(message: string, fields?: LogContext): void {
    this.logger.info(message, redactFields(fields));
  }

  public warn(message: string, fields?: LogContext): void {
    this.logger.warn(message, redactFields(fields));
  }

  public error(message: string, fields?: LogContext): void {
    this.logger.error(message, redactFields(fields));
  }

  public child(context: LogContext): Logger {
    return new RedactingLogger(this.logger.child(context));
  }
}

/** `fields` with every Error among them redacted ({@link redactedError}); the same object when there is none. */
function redactFields(fields: LogContext | undefined): LogContext | undefined {
  if (fields === undefined || !hasError(fields)) return fields;
  return Object.fromEntries(Object.entries(fields).map(([key, value]) => [key, redactedError(value)]));
}

/**
 * A logger that writes through `logger`, with every error among the fields (and its `cause` chain) reduced to its name
 * and its message redacted ({@link redactedError}): what a consumer logs unless `logPayloadValues` is set.
 */
export function redactingLogger(logger: Logger): Logger {
  return new RedactingLogger(logger);
}

/**
 * The logger {@link createLogger} makes. A child keeps its parent's contexts and adds its own, merged only when a line
 * is written: the runtime makes a child per message, and at the default level most of them write nothing.
 */
class JsonLogger implements Logger {
  public constructor(
    private readonly sink: LogSink,
    private readonly now: () => Date,
    private readonly threshold: LogLevel,
    private readonly contexts: readonly LogContext[],
  ) {}

  public debug(message: string, fields?: LogContext): void {
    this.write('DEBUG', message, fields);
  }

  public info(message: string, fields?: LogContext): void {
    this.write('INFO', message, fields);
  }

  public warn(message: string, fields?: LogContext): void {
    this.write('WARN', message, fields);
  }

  public error(message: string, fields?: LogContext): void {
    this.write('ERROR', message, fields);
  }

  public child(context: LogContext): Logger {
    return new JsonLogger(this.sink, this.now, this.threshold, [...this.contexts, context]);
  }

  private write(level: LogLevel, message: string, fields: LogContext = {}): void {
    if (LEVEL_ORDER[level] < LEVEL_ORDER[this.threshold]) return;
    let record: Record<string, unknown> = { level, message, timestamp: this.now().toISOString() };
    for (const context of this.contexts) record = { ...record, ...context };
    this.sink(stringify({ ...record, ...fields }));
  }
}

/** Creates a structured JSON logger. */
export function createLogger(options: LoggerOptions = {}): Logger {
  return new JsonLogger(options.sink ?? stdoutSink, options.now ?? (() => new Date()), options.level ?? logLevelFromEnvironment(), [options.context ?? {}]);
}
