import { UnscopedValidationError } from 'aws-cdk-lib';

/** The name the errors carry (aws-cdk-lib names each of its validation errors; it shows in the stack trace). */
const ERROR_NAME = 'IdempotentEventFlowValidation';

/**
 * The error an invalid prop raises: aws-cdk-lib's own validation error, so `Errors.isValidationError(err)` (public in
 * aws-cdk-lib) is true for it as for aws-cdk-lib's constructs, and the CDK CLI reports it as a validation error. The
 * message names the construct, the prop, the bound and the value.
 *
 * aws-cdk-lib exports `UnscopedValidationError` from its entry point but marks it internal (its `name` parameter is an
 * internal branded string type), so it is made here only; test/constructs/cdk-conventions.test.ts fails if an upgrade
 * changes what it is.
 */
export function validationError(message: string): Error {
  return new UnscopedValidationError(ERROR_NAME as ConstructorParameters<typeof UnscopedValidationError>[0], message);
}
