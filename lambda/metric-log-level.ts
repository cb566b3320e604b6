/**
 * The `level` of a consumer's EMF metric lines. A function in JSON log format with an application log level has its
 * lines filtered by Lambda on their `level`, a line without one counting as INFO (Lambda developer guide, "Log-level
 * filtering"): at WARN, ERROR or FATAL every metric line would be dropped, and with it every consumer metric and the
 * alarms on them. Pure: reads the environment only.
 */
import { LOG_LEVEL_ENVIRONMENT_VARIABLE } from './logger';

/** The application log levels above INFO: Lambda drops INFO lines at each. */
const LEVELS_ABOVE_INFO: ReadonlySet<string> = new Set(['WARN', 'ERROR', 'FATAL']);

/**
 * The level a metric line is written at: INFO, or the function's application log level (`AWS_LAMBDA_LOG_LEVEL`) when
 * that is WARN, ERROR or FATAL. So Lambda keeps the line at every setting, labelled no more severe than it must be.
 */
export function metricLogLevel(env: Readonly<Record<string, string | undefined>> = process.env): string {
  const level = (env[LOG_LEVEL_ENVIRONMENT_VARIABLE] ?? '').trim().toUpperCase();
  return LEVELS_ABOVE_INFO.has(level) ? level : 'INFO';
}
