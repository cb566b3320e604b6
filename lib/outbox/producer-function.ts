import { Duration, Validations } from 'aws-cdk-lib';
import { Construct } from 'constructs';
import { FunctionOptions } from '../functions/function-options';
import { BundledFunctionBase } from '../functions/bundled-function-base';
import { RESERVED_PRODUCER_ENVIRONMENT } from '../private/producer-environment';
import { acknowledgeInRegulatoryPacks } from '../private/regulatory-acknowledgements';
import { validateSecureFunctionOptions } from '../private/secure-nodejs-function';
import { IOutboxTable } from './outbox-table';

/** Properties of a {@link ProducerFunction}. */
export interface ProducerFunctionProps extends FunctionOptions {
  /** The outbox the function appends events to; it gets permission to, and the runtime's environment for it. */
  readonly outboxTable: IOutboxTable;
}

/**
 * A Lambda function that appends events to an outbox in the same transaction as its business writes.
 *
 * Its handler uses `Outbox.fromEnvironment()` from `@idempotent-event-flow/runtime`; this construct sets that
 * environment and grants `grantAppendEvents` on the outbox. Grant it access to your business tables yourself.
 * It is hardened like the consumer functions: its own log group, its own role without AWS managed policies,
 * JSON logs, X-Ray tracing, ARM64 on the latest Node.js runtime, bundled by the local esbuild.
 *
 * A producer is meant to be invoked synchronously by the user's API (API Gateway, a client's RequestResponse invoke),
 * which gets the error back and retries: there is no asynchronous invocation to dead-letter, so cdk-nag's `LambdaDLQ`
 * rule (Serverless, NIST 800-53 R5, HIPAA) is acknowledged with that reason. If you invoke it asynchronously (an
 * EventBridge rule, an S3 notification), give it an on-failure destination yourself
 * (`producer.lambdaFunction.configureAsyncInvoke({ onFailure: ... })`).
 */
export class ProducerFunction extends BundledFunctionBase {
  public constructor(scope: Construct, id: string, props: ProducerFunctionProps) {
    validateSecureFunctionOptions(`ProducerFunction '${id}'`, props, RESERVED_PRODUCER_ENVIRONMENT);
    super(
      scope,
      id,
      { ...props, description: `Producer appending events to ${props.outboxTable.node.path}`, defaultTimeout: Duration.seconds(30) },
      props.outboxTable.producerEnvironment,
    );
    props.outboxTable.grantAppendEvents(this.role);

    const synchronous =
      'A producer is invoked synchronously by the user\'s API, which gets the error back and retries; a Lambda ' +
      'dead-letter queue only applies to asynchronous invocations (an asynchronously invoked producer needs an ' +
      'on-failure destination, see ProducerFunction).';
    Validations.of(this.lambdaFunction).acknowledge({ id: 'Serverless-LambdaDLQ', reason: synchronous });
    acknowledgeInRegulatoryPacks(this.lambdaFunction, 'LambdaDLQ', synchronous);
  }
}
