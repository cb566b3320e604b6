import { Stack } from 'aws-cdk-lib';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import { ENV } from '../../lambda/contract/environment';

/** Every variable name of the runtime contract (`IEF_*`), whichever function uses it. */
const CONTRACT_VARIABLES: readonly string[] = Object.values(ENV);

/**
 * Refuses at synth a function whose runtime-contract variables (`IEF_*`) are not exactly the ones the construct set:
 * `lambdaFunction.addEnvironment('IEF_DEDUPLICATION_WINDOW_SECONDS', '120')` would silently change the contract (a
 * window the construct's props would have refused), and a contract variable the construct did not set would switch on
 * what the construct did not wire (an outbox without its grant). The `environment` prop is checked when the construct
 * is created; this checks what was added afterwards. The error names the function, the variable, the value the
 * construct set (if any) and the value found.
 *
 * @param owner the construct named at the start of each message, e.g. `ConsumerFunction 'Function'`
 * @param contractEnvironment the contract variables the construct set, with their values
 */
export function guardContractEnvironment(owner: string, lambdaFunction: lambda.Function, contractEnvironment: Readonly<Record<string, string>>): void {
  lambdaFunction.node.addValidation({
    validate: () => {
      const stack = Stack.of(lambdaFunction);
      const resource = lambdaFunction.node.defaultChild as lambda.CfnFunction;
      const found = (stack.resolve(resource.environment) as { variables?: Record<string, unknown> } | undefined)?.variables ?? {};
      const set = stack.resolve(contractEnvironment) as Record<string, unknown>;
      const errors: string[] = [];
      for (const name of CONTRACT_VARIABLES) {
        if (!(name in found)) continue;
        const value = JSON.stringify(found[name]);
        if (!(name in set)) {
          errors.push(
            `${owner}: environment variable ${name} must not be set (it belongs to the runtime contract and this function does not use it), ` +
              `but it was set to ${value}, e.g. with addEnvironment; configure it through the construct's props`,
          );
        } else if (value !== JSON.stringify(set[name])) {
          errors.push(
            `${owner}: environment variable ${name} must keep the value the construct set (${JSON.stringify(set[name])}), because it is part of the ` +
              `runtime contract, but it was changed to ${value}, e.g. with addEnvironment; configure it through the construct's props`,
          );
        }
      }
      return errors;
    },
  });
}
