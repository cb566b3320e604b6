/**
 * The compliance controls the example's functions leave off, acknowledged with the reason (docs/COMPLIANCE.md): each
 * is opt-in, and the example must deploy in any account at no extra cost.
 */
import { Validations } from 'aws-cdk-lib';
import type { IConstruct } from 'constructs';

/** Acknowledges, on a function of the example, the opt-in controls it leaves off: reserved concurrency and a VPC. */
export function acknowledgeOptInFunctionControls(fn: IConstruct): void {
  Validations.of(fn).acknowledge(
    ...['NIST.800.53.R5-LambdaConcurrency', 'HIPAA.Security-LambdaConcurrency'].map((id) => ({
      id,
      reason:
        'Reserved concurrency is opt-in (reservedConcurrentExecutions): a new account has a concurrency limit of 10 and ' +
        'can reserve none, so the example, which must deploy anywhere, reserves none.',
    })),
    ...['NIST.800.53.R5-LambdaInsideVPC', 'HIPAA.Security-LambdaInsideVPC', 'PCI.DSS.321-LambdaInsideVPC'].map((id) => ({
      id,
      reason:
        'Running in a VPC is opt-in (vpc, vpcSubnets, securityGroups): it needs VPC endpoints for DynamoDB, SQS, KMS, ' +
        'CloudWatch Logs and X-Ray (or a NAT gateway), which cost money; the example has no private network to reach.',
    })),
  );
}
