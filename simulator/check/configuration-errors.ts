/**
 * Which failures are configuration or deployment errors rather than problems of an event: a handler that is not
 * exported, a module that does not load, the runtime's `ConfigurationError` (wrong factory for the processing mode, a
 * missing variable), a permission the function's role lacks, a table that does not exist, or anything the module
 * threw while it loaded (the init phase of a cold start). Every event fails the same way, so a dead letter with such a
 * reason means the app is broken, not that the run went well.
 *
 * The names are those Lambda and the AWS SDK report (the simulator's worker reports the same: worker-bootstrap.ts).
 */
import { INIT_FAILURE_PREFIX } from '../observation/observer';

/** Error names that say the function is misconfigured or misdeployed, whatever the event. */
export const CONFIGURATION_ERROR_NAMES: ReadonlySet<string> = new Set([
  // the Lambda Node.js runtime, loading the handler
  'Runtime.HandlerNotFound',
  'Runtime.ImportModuleError',
  'Runtime.UserCodeSyntaxError',
  'Runtime.MalformedHandlerName',
  // this library's runtime: the environment or the factory options do not fit (lambda/config.ts, names in lambda/contract/environment.ts)
  'ConfigurationError',
  // the function's role lacks a permission
  'AccessDeniedException',
  'AccessDenied',
  // a table (or another resource) the function names does not exist
  'ResourceNotFoundException',
]);

/** The error a failure reason names, and whether it was thrown while the handler loaded. */
export interface NamedFailure {
  readonly errorName: string;
  readonly atInit: boolean;
}

/** The shapes a dead letter's explanation takes (check/dead-letters.ts, observation/observer.ts `describeFailure`, observation/ledger.ts). */
const REASON_PATTERNS: readonly { readonly pattern: RegExp; readonly atInit: boolean }[] = [
  { pattern: new RegExp(`${INIT_FAILURE_PREFIX.replace(/[()]/g, '\\$&')} ([\\w.]+): `), atInit: true },
  { pattern: /the invocation threw ([\w.]+): /, atInit: false },
  { pattern: /the runtime reported: ([\w.]+): /, atInit: false },
  // the runtime's own dead letter: `<iefErrorName>: <iefErrorMessage>`
  { pattern: /^([\w.]+): /, atInit: false },
];

/** The error a dead letter's explanation names; undefined when it names none (a crash, a timeout, a lost delete). */
export function failureNamedIn(explanation: string): NamedFailure | undefined {
  for (const { pattern, atInit } of REASON_PATTERNS) {
    const match = pattern.exec(explanation);
    if (match?.[1] !== undefined) return { errorName: match[1], atInit };
  }
  return undefined;
}

/** Whether a failure is a configuration or deployment error: a name of {@link CONFIGURATION_ERROR_NAMES}, or any error at init. */
export function isConfigurationError(failure: NamedFailure): boolean {
  return failure.atInit || CONFIGURATION_ERROR_NAMES.has(failure.errorName);
}

/**
 * The configuration error an explanation names, as it is grouped in a violation (`Runtime.HandlerNotFound`, or
 * `TypeError at initialization`); undefined when the explanation names none.
 */
export function configurationErrorIn(explanation: string | undefined): string | undefined {
  const failure = explanation === undefined ? undefined : failureNamedIn(explanation);
  if (failure === undefined || !isConfigurationError(failure)) return undefined;
  return failure.atInit && !CONFIGURATION_ERROR_NAMES.has(failure.errorName) ? `${failure.errorName} at initialization` : failure.errorName;
}
