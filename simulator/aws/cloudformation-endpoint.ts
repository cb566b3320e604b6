/**
 * CloudFormation's stack reads for a served run (./aws-gateway.ts), in the Query protocol of
 * @aws-sdk/client-cloudformation v3 (a form-encoded `Action=...` body, XML answers in the
 * `http://cloudformation.amazonaws.com/doc/2010-05-15/` namespace): `DescribeStacks` (with the stacks' outputs),
 * `ListStackResources` and `DescribeStackResources` (each resource's logical id, type and the physical id the run
 * uses: a table's name, a queue's URL, a function's name, a topic's ARN; given a `PhysicalResourceId` instead of a
 * `StackName`, the resources of the stack that owns it, or `ValidationError` "Stack for <id> does not exist"), and `GetTemplate` (the synthesized template,
 * whose `aws:cdk:path` metadata verify names the producers by). A stack the run does not serve is answered
 * `ValidationError` "Stack with id <name> does not exist" (400), as CloudFormation does; any other action
 * `InvalidAction` (400). Read-only: nothing here changes the run.
 *
 * As on AWS, a stack is a resource of one account and Region: a request signed for an account (the served runs' access
 * key convention, `<account>` or `<account>.<role name>`, ../iam/assume-role.ts) sees only the stacks of that account
 * and of the Region its SigV4 credential scope names; another stack is answered as not existing (rv9 V-1). A request
 * signed with a key naming no account (the served run's own `simulator` key) sees every stack of the app.
 */
import { randomUUID } from 'node:crypto';
import { principalOfAccessKey } from '../iam/assume-role';
import type { GatewayAnswer, ServiceHandler } from './aws-gateway';

/** One resource of a served stack. */
export interface ServedStackResource {
  readonly logicalId: string;
  readonly type: string;
  /** What CloudFormation would report as its physical id; the run's local name. */
  readonly physicalId: string;
}

/** One served stack. */
export interface ServedStack {
  readonly stackName: string;
  /** `arn:aws:cloudformation:<region>:<account>:stack/<name>/<id>` */
  readonly stackId: string;
  /** When the run served it (its creation time as reported). */
  readonly createdAt: string;
  readonly outputs: readonly { readonly key: string; readonly value: string; readonly description?: string }[];
  readonly resources: readonly ServedStackResource[];
  /**
   * The template as `GetTemplate` answers it (the synthesized JSON).
   * @default one listing the resources' types only (no metadata)
   */
  readonly templateBody?: string;
}

const XMLNS = 'http://cloudformation.amazonaws.com/doc/2010-05-15/';

function xml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

function element(name: string, value: string | undefined): string {
  return value === undefined ? '' : `<${name}>${xml(value)}</${name}>`;
}

function answer(action: string, result: string): GatewayAnswer {
  const body = `<${action}Response xmlns="${XMLNS}"><${action}Result>${result}</${action}Result><ResponseMetadata><RequestId>${randomUUID()}</RequestId></ResponseMetadata></${action}Response>`;
  return { status: 200, headers: { 'content-type': 'text/xml' }, body };
}

function error(code: string, message: string): GatewayAnswer {
  const body = `<ErrorResponse xmlns="${XMLNS}"><Error><Type>Sender</Type><Code>${xml(code)}</Code><Message>${xml(message)}</Message></Error><RequestId>${randomUUID()}</RequestId></ErrorResponse>`;
  return { status: 400, headers: { 'content-type': 'text/xml' }, body };
}

function stackXml(stack: ServedStack): string {
  const outputs = stack.outputs
    .map((output) => `<member>${element('OutputKey', output.key)}${element('OutputValue', output.value)}${element('Description', output.description)}</member>`)
    .join('');
  return `<member>${element('StackName', stack.stackName)}${element('StackId', stack.stackId)}${element('CreationTime', stack.createdAt)}<StackStatus>CREATE_COMPLETE</StackStatus><Outputs>${outputs}</Outputs></member>`;
}

/** The stacks a request signed with `authorization` sees: those of its account and Region, or all for a key naming no account. */
function visibleStacks(stacks: readonly ServedStack[], authorization: string | undefined): readonly ServedStack[] {
  // Credential=<key id>/<date>/<region>/<service>/aws4_request
  const scope = /Credential=([^/,\s]+)\/[^/]+\/([^/]+)\//.exec(authorization ?? '');
  const caller = scope === null ? undefined : principalOfAccessKey(scope[1]!);
  if (caller === undefined) return stacks;
  const region = scope![2]!;
  // arn:aws:cloudformation:<region>:<account>:stack/<name>/<id>
  return stacks.filter((stack) => stack.stackId.split(':')[3] === region && stack.stackId.split(':')[4] === caller.account);
}

/** The handler of CloudFormation's stack reads over `stacks` (each request sees those of its account and Region). */
export function cloudFormationHandler(allStacks: readonly ServedStack[]): ServiceHandler {
  return async ({ body, headers }) => {
    const stacks = visibleStacks(allStacks, typeof headers.authorization === 'string' ? headers.authorization : undefined);
    const find = (name: string | null): ServedStack | undefined => stacks.find((stack) => stack.stackName === name || stack.stackId === name);
    const form = new URLSearchParams(body.toString('utf8'));
    const action = form.get('Action') ?? '';
    const name = form.get('StackName');
    const missing = (): GatewayAnswer => error('ValidationError', `Stack with id ${name ?? ''} does not exist`);
    switch (action) {
      case 'DescribeStacks': {
        if (name === null) return answer(action, `<Stacks>${stacks.map(stackXml).join('')}</Stacks>`);
        const stack = find(name);
        return stack === undefined ? missing() : answer(action, `<Stacks>${stackXml(stack)}</Stacks>`);
      }
      case 'ListStackResources': {
        const stack = find(name);
        if (stack === undefined) return missing();
        const members = stack.resources.map(
          (resource) =>
            `<member>${element('LogicalResourceId', resource.logicalId)}${element('PhysicalResourceId', resource.physicalId)}${element('ResourceType', resource.type)}${element('LastUpdatedTimestamp', stack.createdAt)}<ResourceStatus>CREATE_COMPLETE</ResourceStatus></member>`,
        );
        return answer(action, `<StackResourceSummaries>${members.join('')}</StackResourceSummaries>`);
      }
      case 'DescribeStackResources': {
        // without StackName, PhysicalResourceId: every resource of the stack that owns that resource
        const physicalId = form.get('PhysicalResourceId');
        const stack = name === null && physicalId !== null ? stacks.find((each) => each.resources.some((resource) => resource.physicalId === physicalId)) : find(name);
        if (stack === undefined && name === null && physicalId !== null) return error('ValidationError', `Stack for ${physicalId} does not exist`);
        if (stack === undefined) return missing();
        const logicalId = form.get('LogicalResourceId');
        const members = stack.resources
          .filter((resource) => logicalId === null || resource.logicalId === logicalId)
          .map(
            (resource) =>
              `<member>${element('StackName', stack.stackName)}${element('StackId', stack.stackId)}${element('LogicalResourceId', resource.logicalId)}${element('PhysicalResourceId', resource.physicalId)}${element('ResourceType', resource.type)}${element('Timestamp', stack.createdAt)}<ResourceStatus>CREATE_COMPLETE</ResourceStatus></member>`,
          );
        return answer(action, `<StackResources>${members.join('')}</StackResources>`);
      }
      case 'GetTemplate': {
        const stack = find(name);
        if (stack === undefined) return missing();
        const body = stack.templateBody ?? JSON.stringify({ Resources: Object.fromEntries(stack.resources.map((resource) => [resource.logicalId, { Type: resource.type }])) });
        return answer(action, `${element('TemplateBody', body)}<StagesAvailable><member>Original</member><member>Processed</member></StagesAvailable>`);
      }
      default:
        return error('InvalidAction', `the served run answers DescribeStacks, ListStackResources, DescribeStackResources and GetTemplate, not ${action || '(no Action)'}`);
    }
  };
}
