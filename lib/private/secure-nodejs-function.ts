import { Duration, RemovalPolicy, Token, Validations } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as nodejs from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { FunctionOptions } from '../functions/function-options';
import { librarySid } from '../../lambda/contract/statement-ids';
import { guardContractEnvironment } from './contract-environment';
import { libraryGrant } from './library-statements';
import { allowLogsToUseKey } from './log-encryption';
import type { BundledFunctionProps } from '../functions/bundled-function-props';
import { assertHandlerEntry } from './handler-entry';
import { assertLocalEsbuild } from './local-esbuild';
import { assertRuntimeVersion } from './runtime-version';
import { acknowledgeInRegulatoryPacks, INLINE_POLICY_REASON } from './regulatory-acknowledgements';
import { validateDurationInRange, validateNumberInRange, validateStringPattern } from './validate-props';
import { validationError } from './validation-error';

/** Defaults of {@link FunctionOptions}, shared by every function this library creates. */
export const FUNCTION_DEFAULTS = {
  RUNTIME: lambda.Runtime.NODEJS_24_X,
  HANDLER: 'handler',
  MEMORY_SIZE_MIB: 256,
  LOG_RETENTION: logs.RetentionDays.ONE_YEAR,
} as const;

/** Where the statements of a function's own role come from, in their library Sid (its logs, its VPC access). */
const FUNCTION_ORIGIN = 'Function';

/** The parts {@link createSecureNodejsFunction} creates. */
export interface SecureNodejsFunctionParts {
  readonly lambdaFunction: nodejs.NodejsFunction;
  readonly role: iam.Role;
  readonly logGroup: logs.LogGroup;
}

/** How {@link createSecureNodejsFunction} builds a function: the user's options and what the construct decides. */
export type SecureFunctionOptions = BundledFunctionProps & { readonly timeout: Duration };

/**
 * Creates, under `scope`, a function hardened the same way for consumers and producers: its own `LogGroup`
 * (retention, RETAIN), its own `Role` without AWS managed policies (logs scoped to that log group), JSON logging,
 * X-Ray tracing, ARM64 on the latest Node.js runtime, and `Resource`: a NodejsFunction bundled by the local esbuild
 * with the AWS SDK inside, so the deployed runtime is the tested one.
 */
export function createSecureNodejsFunction(
  scope: Construct,
  options: SecureFunctionOptions,
  contractEnvironment: { [key: string]: string },
): SecureNodejsFunctionParts {
  assertLocalEsbuild(scope);
  assertHandlerEntry(scope, options.entry, options.handler ?? FUNCTION_DEFAULTS.HANDLER, options.bundling?.tsconfig, options.expectedFactory);
  assertRuntimeVersion(scope, options.entry);
  if (options.logEncryptionKey !== undefined) allowLogsToUseKey(scope, options.logEncryptionKey);
  const logGroup = new logs.LogGroup(scope, 'LogGroup', {
    retention: options.logRetention ?? FUNCTION_DEFAULTS.LOG_RETENTION,
    removalPolicy: options.removalPolicy ?? RemovalPolicy.RETAIN,
    encryptionKey: options.logEncryptionKey,
  });

  // Our own role with an inline policy scoped to this log group, instead of AWSLambdaBasicExecutionRole
  // (an AWS managed policy that may write to any log group).
  const role = new iam.Role(scope, 'Role', {
    assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
    description: options.description,
    inlinePolicies: {
      Logs: new iam.PolicyDocument({
        statements: [
          new iam.PolicyStatement({
            sid: librarySid(FUNCTION_ORIGIN, 1),
            actions: ['logs:CreateLogStream', 'logs:PutLogEvents'],
            // The log group's ARN attribute ends in ':*', which covers its log streams.
            resources: [logGroup.logGroupArn],
          }),
        ],
      }),
    },
  });

  const bundling = options.bundling ?? {};
  const tracing = options.tracing ?? lambda.Tracing.ACTIVE;
  const lambdaFunction = new nodejs.NodejsFunction(scope, 'Resource', {
    entry: options.entry,
    handler: options.handler ?? FUNCTION_DEFAULTS.HANDLER,
    description: options.description,
    runtime: FUNCTION_DEFAULTS.RUNTIME,
    architecture: lambda.Architecture.ARM_64,
    timeout: options.timeout,
    memorySize: options.memorySize ?? FUNCTION_DEFAULTS.MEMORY_SIZE_MIB,
    role,
    logGroup,
    loggingFormat: lambda.LoggingFormat.JSON,
    applicationLogLevelV2: options.applicationLogLevel,
    tracing,
    reservedConcurrentExecutions: options.reservedConcurrentExecutions,
    vpc: options.vpc,
    vpcSubnets: options.vpcSubnets,
    securityGroups: options.securityGroups,
    environment: {
      ...options.environment,
      ...(bundling.sourceMap ? { NODE_OPTIONS: withSourceMaps(options.environment?.NODE_OPTIONS) } : {}),
      ...contractEnvironment,
    },
    bundling: {
      // Never Docker: the library promises local, reproducible bundling with the installed esbuild.
      forceDockerBundling: false,
      // Bundle everything, the AWS SDK included, so the deployed runtime matches the tested one.
      externalModules: [],
      minify: bundling.minify ?? true,
      sourceMap: bundling.sourceMap ?? false,
      tsconfig: bundling.tsconfig,
      define: bundling.define,
    },
  });

  guardContractEnvironment(`${scope.constructor.name} '${scope.node.id}'`, lambdaFunction, contractEnvironment);

  if (options.vpc !== undefined) {
    // What AWSLambdaVPCAccessExecutionRole grants, inline (Lambda adds that managed policy only to roles it creates).
    libraryGrant(FUNCTION_ORIGIN, {
      grantee: role,
      actions: [
        'ec2:CreateNetworkInterface',
        'ec2:DescribeNetworkInterfaces',
        'ec2:DescribeSubnets',
        'ec2:DeleteNetworkInterface',
        'ec2:AssignPrivateIpAddresses',
        'ec2:UnassignPrivateIpAddresses',
      ],
      resourceArns: ['*'],
    });
  }
  if (tracing !== lambda.Tracing.DISABLED || options.vpc !== undefined) {
    Validations.of(role).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason:
        'X-Ray tracing (xray:PutTraceSegments, xray:PutTelemetryRecords) and, in a VPC, the network-interface actions of ' +
        'AWSLambdaVPCAccessExecutionRole (ec2:CreateNetworkInterface, ...) do not support resource-level permissions, ' +
        'so they are granted on Resource "*". Every other statement is scoped to a resource ARN.',
    });
  }
  acknowledgeInRegulatoryPacks(role, 'IAMNoInlinePolicy', INLINE_POLICY_REASON);
  return { lambdaFunction, role, logGroup };
}

/** `NODE_OPTIONS` with `--enable-source-maps` added to what the user set, if anything. */
function withSourceMaps(nodeOptions: string | undefined): string {
  return nodeOptions ? `--enable-source-maps ${nodeOptions}` : '--enable-source-maps';
}

/** An exported JavaScript identifier. */
const HANDLER_PATTERN = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/**
 * Checks {@link FunctionOptions} against the Lambda limits, and that `environment` does not set a variable of the
 * runtime contract (`reservedEnvironment`), which the construct sets itself.
 */
export function validateSecureFunctionOptions(owner: string, props: FunctionOptions, reservedEnvironment: readonly string[]): void {
  // Lambda's own handler setting is `file.export`; here entry names the file and handler only the export.
  const fileAndExport = typeof props.handler === 'string' ? /^[^.]+\.([A-Za-z_$][A-Za-z0-9_$]*)$/.exec(props.handler) : null;
  if (fileAndExport !== null) {
    throw validationError(
      `${owner}: handler must be the name of the exported function only, but '${props.handler}' was provided; ` +
        `entry names the file, so drop the file part: handler: '${fileAndExport[1]}'`,
    );
  }
  validateStringPattern(owner, 'handler', props.handler, HANDLER_PATTERN, 'the name of an exported function');
  validateDurationInRange(owner, 'timeout', props.timeout, { min: Duration.seconds(1), max: Duration.minutes(15) });
  validateNumberInRange(owner, 'memorySize', props.memorySize, { min: 128, max: 10240, integer: true });
  validateNumberInRange(owner, 'reservedConcurrentExecutions', props.reservedConcurrentExecutions, { min: 1, integer: true });
  if (props.vpc === undefined) {
    for (const prop of ['vpcSubnets', 'securityGroups'] as const) {
      if (props[prop] !== undefined) throw validationError(`${owner}: ${prop} can only be used with vpc, but no vpc was provided`);
    }
  }
  for (const key of Object.keys(props.environment ?? {})) {
    if (!Token.isUnresolved(key) && reservedEnvironment.includes(key)) {
      throw validationError(`${owner}: environment must not set ${key} (the construct sets it for the runtime), but it was provided`);
    }
  }
}
