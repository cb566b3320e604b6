/**
 * Compliance harness: synthesizes an App with cdk-nag (AwsSolutions + Serverless) and the
 * built-in CloudFormation validation in strict mode, then returns what a `cdk synth` with
 * this repo's `cdk.json` would complain about, as plain data.
 *
 * ```ts
 * const app = complianceApp();
 * new MyStack(app, 'Stack');
 * assertCompliant(checkCompliance(app));
 * ```
 *
 * See docs/COMPLIANCE.md for how findings are acknowledged.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { App, Validations } from 'aws-cdk-lib';
import * as cxapi from 'aws-cdk-lib/cx-api';
import { AwsSolutionsChecks, HIPAASecurityChecks, NagPack, NIST80053R5Checks, PCIDSS321Checks, ServerlessChecks } from 'cdk-nag';
import type { IConstruct } from 'constructs';

/** Props for {@link complianceApp}. */
export interface ComplianceAppProps {
  /**
   * Run asset bundling (esbuild, Docker) during synthesis.
   *
   * @default false - no stack is bundled (`aws:cdk:bundling-stacks` is `[]`), so synthesis needs neither esbuild nor Docker
   */
  readonly bundling?: boolean;

  /**
   * Context applied on top of the context in the repository's `cdk.json`.
   *
   * @default - exactly the `cdk.json` context (recommended feature flags + strict validation)
   */
  readonly context?: Record<string, unknown>;

  /**
   * Directory the cloud assembly is written to.
   *
   * @default - a new directory under `os.tmpdir()` named `idempotent-event-flow-compliance-*`
   */
  readonly outdir?: string;

  /**
   * Also run cdk-nag's regulatory packs: NIST 800-53 rev 5, HIPAA Security and PCI DSS 3.2.1.
   *
   * @default false - AwsSolutions and Serverless only
   */
  readonly regulatoryPacks?: boolean;
}

/** A cdk-nag (or construct annotation) finding that no acknowledgement answers. */
export interface ComplianceFinding {
  /** Plugin that reported it: `AwsSolutions`, `Serverless` or `Construct Annotations`. */
  readonly source: string;
  /** Rule id, including any finding suffix, e.g. `AwsSolutions-IAM5[Action::s3:*]`. */
  readonly ruleId: string;
  /** Construct path of the offending resource, e.g. `Stack/Queue/Resource`. */
  readonly path: string;
  /** `error` or `warning`; in strict mode both fail `cdk synth`. */
  readonly severity: string;
  readonly message: string;
}

/** A finding of the CloudFormation validator (`@aws/cloudformation-validate`) that no acknowledgement answers. */
export interface CfnValidationIssue {
  /** Validator rule id, e.g. `F3034` (schema) or `W2001` (best practice). Acknowledge it as `CloudFormation-Validate::<ruleId>`. */
  readonly ruleId: string;
  /** Construct path of the offending resource, or of the stack for template-level issues. */
  readonly path: string;
  /** Logical id in the template, when the issue is about a resource. */
  readonly logicalId?: string;
  /** Property path in the template, e.g. `Properties.MessageRetentionPeriod`. */
  readonly propertyPath?: string;
  /** `error` or `warning`; in strict mode both fail `cdk synth`. */
  readonly severity: string;
  readonly message: string;
}

/** A finding that an acknowledgement suppressed. */
export interface AcknowledgedFinding {
  readonly source: string;
  readonly ruleId: string;
  /** Construct path of the resource the finding is about. */
  readonly path: string;
  /** Construct path where `Validations.of(...).acknowledge()` was called: the resource or one of its ancestors. */
  readonly acknowledgedAt: string;
  readonly reason: string;
}

/** One `Validations.of(construct).acknowledge({ id, reason })` call found in the construct tree. */
export interface Acknowledgement {
  /** The id as recorded by aws-cdk-lib, e.g. `Annotation::AwsSolutions-SQS3` for a bare cdk-nag id. */
  readonly id: string;
  /** Construct path the acknowledgement was declared on. */
  readonly declaredAt: string;
  readonly reason: string;
}

/** Result of {@link checkCompliance}. A compliant app has all three problem lists empty. */
export interface ComplianceResult {
  /** cdk-nag and construct-annotation findings nobody acknowledged. */
  readonly unansweredFindings: ComplianceFinding[];
  /** CloudFormation validator findings nobody acknowledged, errors and warnings alike (strict mode fails synthesis on both). */
  readonly cfnValidationErrors: CfnValidationIssue[];
  /** Findings suppressed by an acknowledgement, with its reason. */
  readonly acknowledged: AcknowledgedFinding[];
  /** Acknowledgements whose reason is empty or whitespace: every acknowledgement must say why. */
  readonly acknowledgementsWithoutReason: Acknowledgement[];
  /** The `validation-report.json` written by aws-cdk-lib, for the full detail (stack traces, fixes). */
  readonly reportPath: string;
}

const NAG_PACKS = [AwsSolutionsChecks, ServerlessChecks] as const;
/** The packs a regulated workload adds (see docs/COMPLIANCE.md, "Regulatory packs"). */
export const REGULATORY_NAG_PACKS = [NIST80053R5Checks, HIPAASecurityChecks, PCIDSS321Checks] as const;
const CFN_VALIDATE_PLUGIN_NAME = 'CloudFormation Validate';
const CDK_JSON_PATH = path.resolve(__dirname, '..', '..', 'cdk.json');

/** Apps made by complianceApp(), with their nag packs, so checkCompliance() can refuse an App without them. */
const complianceApps = new WeakMap<App, ReadonlyArray<new () => NagPack>>();

/**
 * An App configured like `cdk synth` in this repository, plus cdk-nag.
 *
 * - context: everything in `cdk.json` (recommended feature flags, `validateAgainstDefaultRules` and
 *   `strictCfnValidateErrors`), then `props.context`;
 * - validation plugins: `AwsSolutionsChecks` and `ServerlessChecks`, next to the built-in CloudFormation validator;
 * - synthesis reports instead of throwing (`@aws-cdk/core:failSynthOnValidationErrors: false`), so
 *   {@link checkCompliance} can return every finding at once.
 */
export function complianceApp(props: ComplianceAppProps = {}): App {
  const forced: Record<string, unknown> = { [cxapi.FAIL_SYNTH_ON_VALIDATION_ERRORS_CONTEXT]: false };
  if (!props.bundling) {
    forced['aws:cdk:bundling-stacks'] = [];
  }
  const app = new App({
    outdir: props.outdir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'idempotent-event-flow-compliance-')),
    context: { ...readCdkJsonContext(), ...props.context },
    // postCliContext wins over everything, so a test cannot accidentally turn these off.
    postCliContext: forced,
    builtinCloudFormationValidation: true,
  });
  const packs: ReadonlyArray<new () => NagPack> = [...NAG_PACKS, ...(props.regulatoryPacks ? REGULATORY_NAG_PACKS : [])];
  Validations.of(app).addPlugins(...packs.map((Pack) => new Pack()));
  complianceApps.set(app, packs);
  return app;
}

/** The `context` object of the repository's `cdk.json`. */
export function readCdkJsonContext(): Record<string, unknown> {
  const cdkJson = JSON.parse(fs.readFileSync(CDK_JSON_PATH, 'utf-8')) as { context?: Record<string, unknown> };
  return cdkJson.context ?? {};
}

/**
 * Synthesizes `app` (once; later calls reuse the assembly) and sorts every validation finding into
 * unanswered, CloudFormation and acknowledged.
 *
 * Throws, rather than reporting a clean result, when validation did not really run: the App was not
 * made by {@link complianceApp}, `CDK_VALIDATION=false` is set, or a validation plugin crashed.
 */
export function checkCompliance(app: App): ComplianceResult {
  if (!complianceApps.has(app)) {
    throw new Error('checkCompliance() needs an App created by complianceApp(); other Apps have no cdk-nag packs');
  }
  if (process.env.CDK_VALIDATION === 'false') {
    throw new Error('CDK_VALIDATION=false disables the CloudFormation validator; unset it to check compliance');
  }
  const assembly = app.synth();
  const reportPath = path.join(assembly.directory, cxapi.VALIDATION_REPORT_FILE);
  if (!fs.existsSync(reportPath)) {
    throw new Error(`Synthesis wrote no ${cxapi.VALIDATION_REPORT_FILE} in ${assembly.directory}; validation did not run`);
  }
  const report = JSON.parse(fs.readFileSync(reportPath, 'utf-8')) as ValidationReportJson;

  const unansweredFindings: ComplianceFinding[] = [];
  const cfnValidationErrors: CfnValidationIssue[] = [];
  const acknowledged: AcknowledgedFinding[] = [];
  const reported = new Set<string>();

  for (const plugin of report.pluginReports) {
    const crash = plugin.metadata?.error;
    if (plugin.conclusion === 'failure' && plugin.violations.length === 0 && crash) {
      throw new Error(`Validation plugin '${plugin.pluginName}' did not run: ${crash}`);
    }
    for (const violation of plugin.violations) {
      for (const construct of violation.violatingConstructs) {
        reported.add(findingKey(plugin.pluginName, violation.ruleName, construct.constructPath));
        if (plugin.pluginName === CFN_VALIDATE_PLUGIN_NAME) {
          cfnValidationErrors.push({
            ruleId: violation.ruleName,
            path: construct.constructPath,
            logicalId: construct.cloudFormationResource?.logicalId,
            propertyPath: construct.cloudFormationResource?.propertyPaths?.join(', '),
            severity: violation.severity,
            message: violation.description,
          });
        } else {
          unansweredFindings.push({
            source: plugin.pluginName,
            ruleId: violation.ruleName,
            path: construct.constructPath,
            severity: violation.severity,
            message: violation.description,
          });
        }
      }
    }
    // Acknowledged with a namespaced id (`AwsSolutions::AwsSolutions-SQS3`, `CloudFormation-Validate::F3034`):
    // aws-cdk-lib moves these to suppressedViolations itself.
    for (const violation of plugin.suppressedViolations ?? []) {
      for (const construct of violation.violatingConstructs) {
        reported.add(findingKey(plugin.pluginName, violation.ruleName, construct.constructPath));
        acknowledged.push({
          source: plugin.pluginName,
          ruleId: violation.ruleName,
          path: construct.constructPath,
          acknowledgedAt: violation.acknowledgedAt ?? '',
          reason: violation.reason ?? '',
        });
      }
    }
  }

  acknowledged.push(...findingsHiddenByCdkNag(app, reported));

  return {
    unansweredFindings,
    cfnValidationErrors,
    acknowledged,
    acknowledgementsWithoutReason: listAcknowledgements(app).filter((ack) => ack.reason.trim() === ''),
    reportPath,
  };
}

/** Throws an Error listing every problem in `result`, unless it has none. */
export function assertCompliant(result: ComplianceResult): void {
  if (
    result.unansweredFindings.length > 0 ||
    result.cfnValidationErrors.length > 0 ||
    result.acknowledgementsWithoutReason.length > 0
  ) {
    throw new Error(formatComplianceResult(result));
  }
}

/** A readable multi-line summary of the problems in `result`, for assertion messages. */
export function formatComplianceResult(result: ComplianceResult): string {
  const lines: string[] = [];
  const section = <T>(title: string, items: T[], line: (item: T) => string) => {
    if (items.length > 0) {
      lines.push(`${items.length} ${title}:`, ...items.map((item) => `  - ${line(item)}`));
    }
  };
  section('unanswered finding(s)', result.unansweredFindings, (f) => `${f.ruleId} (${f.severity}) at ${f.path}: ${f.message}`);
  section('CloudFormation validation finding(s)', result.cfnValidationErrors, (e) => {
    const where = [e.logicalId, e.propertyPath].filter(Boolean).join(' ');
    return `${e.ruleId} (${e.severity}) at ${e.path}${where ? ` [${where}]` : ''}: ${e.message}`;
  });
  section('acknowledgement(s) without a reason', result.acknowledgementsWithoutReason, (a) => `${a.id} at ${a.declaredAt}`);
  if (lines.length === 0) {
    return 'compliant: no unanswered findings, no CloudFormation validation findings';
  }
  lines.push(`Full report: ${result.reportPath}`);
  return lines.join('\n');
}

/**
 * cdk-nag drops findings acknowledged with a bare id (`AwsSolutions-SQS3`) before aws-cdk-lib sees them,
 * so they are not in the report. Re-run the packs with acknowledgements ignored to recover them, and
 * pair each with the acknowledgement that hid it.
 */
function findingsHiddenByCdkNag(app: App, reported: Set<string>): AcknowledgedFinding[] {
  const constructsByPath = new Map(app.node.findAll().map((c) => [c.node.path, c]));
  const hidden: AcknowledgedFinding[] = [];
  for (const Pack of complianceApps.get(app) ?? NAG_PACKS) {
    const pack = ignoringAcknowledgements(new Pack());
    for (const violation of pack.validateScope(app).violations) {
      for (const resource of violation.violatingResources) {
        const constructPath = resource.constructPath ?? '';
        if (reported.has(findingKey(pack.name, violation.ruleName, constructPath))) {
          continue;
        }
        const ack = closestBareAcknowledgement(constructsByPath.get(constructPath), violation.ruleName);
        if (!ack) {
          throw new Error(
            `${violation.ruleName} at ${constructPath} is neither reported nor acknowledged; ` +
              'cdk-nag or aws-cdk-lib changed how acknowledgements work, update test/support/compliance.ts',
          );
        }
        hidden.push({
          source: pack.name,
          ruleId: violation.ruleName,
          path: constructPath,
          acknowledgedAt: ack.declaredAt,
          reason: ack.reason,
        });
      }
    }
  }
  return hidden;
}

/** cdk-nag 3.0.2 checks acknowledgements in the private `isAcknowledged`; switch it off on one instance. */
function ignoringAcknowledgements(pack: NagPack): NagPack {
  const internals = pack as unknown as { isAcknowledged?: unknown };
  if (typeof internals.isAcknowledged !== 'function') {
    throw new Error('cdk-nag no longer has NagPack.isAcknowledged; update test/support/compliance.ts');
  }
  internals.isAcknowledged = () => false;
  return pack;
}

/** The acknowledgement cdk-nag would honour for `ruleId` on `construct`: the nearest one up the tree. */
function closestBareAcknowledgement(construct: IConstruct | undefined, ruleId: string): Acknowledgement | undefined {
  for (let current = construct; current; current = current.node.scope) {
    const match = acknowledgementsOn(current).find((ack) => ack.id.replace(/^annotation::/i, '') === ruleId);
    if (match) {
      return match;
    }
  }
  return undefined;
}

/** Every acknowledgement in the tree under `root`. */
function listAcknowledgements(root: IConstruct): Acknowledgement[] {
  return root.node.findAll().flatMap(acknowledgementsOn);
}

function acknowledgementsOn(construct: IConstruct): Acknowledgement[] {
  return construct.node.metadata
    .filter((entry) => entry.type === Validations.ACKNOWLEDGED_RULES_METADATA_KEY && entry.data)
    .flatMap((entry) =>
      Object.entries(entry.data as Record<string, unknown>).map(([id, reason]) => ({
        id,
        declaredAt: construct.node.path,
        reason: typeof reason === 'string' ? reason : '',
      })),
    );
}

function findingKey(source: string, ruleId: string, constructPath: string): string {
  return `${source}|${ruleId}|${constructPath}`;
}

/** The parts of aws-cdk-lib's `validation-report.json` this harness reads. */
interface ValidationReportJson {
  readonly pluginReports: Array<{
    readonly pluginName: string;
    readonly conclusion: 'success' | 'failure';
    readonly metadata?: { readonly error?: string };
    readonly violations: ReportViolation[];
    readonly suppressedViolations?: Array<ReportViolation & { readonly acknowledgedAt?: string; readonly reason?: string }>;
  }>;
}

interface ReportViolation {
  readonly ruleName: string;
  readonly description: string;
  readonly severity: string;
  readonly violatingConstructs: Array<{
    readonly constructPath: string;
    readonly cloudFormationResource?: { readonly logicalId: string; readonly propertyPaths?: string[] };
  }>;
}
