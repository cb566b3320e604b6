/**
 * The runtime logs a record it failed (`failed`, `skipped`) at WARN. A consumer whose application log level is above WARN
 * (`applicationLogLevel: ERROR` or `FATAL`, passed as `AWS_LAMBDA_LOG_LEVEL`) never writes those lines, so the run reads
 * its failed records from its batch responses and its DynamoDB commits alone, without the runtime's reasons. The
 * report says so once per such subscriber: more commands would not bring the lines back.
 */
import { logLevelFromEnvironment, LOG_LEVEL_ENVIRONMENT_VARIABLE } from '../../lambda/logger';

/** The words of the report's note (tests build their expectation from it). */
export const LOG_LEVEL_HIDES_OUTCOMES_TEXT = "hides the runtime's record outcome lines (written at WARN)";

/**
 * The note for a subscriber whose consumer's application log level (`LoggingConfig.ApplicationLogLevel`, which Lambda
 * passes as `AWS_LAMBDA_LOG_LEVEL`) is above WARN; undefined when the runtime's outcome lines are written (INFO, WARN,
 * DEBUG, or no level set: @default).
 */
export function hiddenOutcomesNote(subscriber: string, applicationLogLevel: string | undefined): string | undefined {
  if (applicationLogLevel === undefined || logLevelFromEnvironment({ [LOG_LEVEL_ENVIRONMENT_VARIABLE]: applicationLogLevel }) !== 'ERROR') return undefined;
  return (
    `${subscriber}: its application log level ${applicationLogLevel} ${LOG_LEVEL_HIDES_OUTCOMES_TEXT}: ` +
    'its failed records are read from its batch responses and commits, without the reasons; run it at INFO or WARN to see them'
  );
}
