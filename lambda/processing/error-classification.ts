/** The default classification of a failed effect. Pure: imports no AWS SDK. */
import { isPermanent } from '../consumer/process-message';
import { RetryableError } from '../errors';
import type { ErrorClassification, ErrorClassifier } from './types';

/**
 * `RetryableError` → `retry`; the `PermanentError` family (by class, or by name so a second bundled copy of the
 * runtime still counts) → `permanent`; anything else → `unknown` (the effect may have taken effect).
 */
export const defaultErrorClassifier: ErrorClassifier = (error) => {
  if (error instanceof RetryableError || (error instanceof Error && error.name === 'RetryableError')) return 'retry';
  if (isPermanent(error)) return 'permanent';
  return 'unknown';
};

const CLASSIFICATIONS: ReadonlySet<string> = new Set<ErrorClassification>(['retry', 'unknown', 'permanent']);

/** Runs `classifier`; a classifier that throws or answers something else counts as `unknown` (the safe answer). */
export function classify(classifier: ErrorClassifier, error: unknown): ErrorClassification {
  try {
    const answer = classifier(error);
    return CLASSIFICATIONS.has(answer) ? answer : 'unknown';
  } catch {
    return 'unknown';
  }
}
