import type { Duration } from 'aws-cdk-lib';
import type { FunctionOptions } from './function-options';

/**
 * The runtime factory a consumer's handler must be built with, checked at synth when the handler's module shows which
 * factory builds it.
 */
export interface ExpectedHandlerFactory {
  /** The factory of the consumer's processing mode, e.g. `createLeaseConsumer`. */
  readonly factory: string;
  /** Every consumer factory of the runtime, with its processing mode as the user sets it, e.g. `ProcessingMode.LEASE`. */
  readonly modeOf: { [factory: string]: string };
}

/**
 * How a {@link BundledFunctionBase} builds its function: the user's {@link FunctionOptions} and what the construct
 * (`ConsumerFunction`, `ProducerFunction`) decides.
 */
export interface BundledFunctionProps extends FunctionOptions {
  /** The function's description. */
  readonly description: string;
  /** The timeout when `timeout` is not given: each construct has its own default. */
  readonly defaultTimeout: Duration;
  /**
   * A consumer's: the runtime factory its handler must be built with.
   *
   * @default - the handler's factory is not checked (a producer)
   */
  readonly expectedFactory?: ExpectedHandlerFactory;
}
