/**
 * What CloudFormation would report of a served run's stacks (simulator/aws/cloudformation-endpoint.ts): each selected
 * stack of the assembly, its resources with the physical ids the run gave them (a table's local name, a queue's URL, a
 * function's name, a topic's ARN; `<stack>-<logical id>` for a resource the run does not create), and its outputs
 * resolved with the run's local names: a resource of the template the run does not create (a relay's pipe, an alarm) is
 * named as its stack resources list names it, `<stack>-<logical id>` (its `Arn`, an ARN of that name in the stack's
 * environment), so every output the template declares is served (the flow's `Operator` output names its pipe); only an
 * output that cannot be resolved at all (one importing an export no stack of the assembly has) is left out. A cross-stack
 * reference (`Fn::ImportValue` of another stack's export, `Fn::GetStackOutput`) is followed as the model follows it
 * (../model/stack-template.ts: a subscriber in its own stack imports the flow's outbox table; nu11 finding 6). Each
 * stack carries its template, as `GetTemplate` answers it (verify reads the functions' construct paths from it). The stack id carries
 * the stack's own account and Region (the app's `env`), as CloudFormation's would. Read once, when the run is handed over to serve: the assembly directory may be a
 * temporary one.
 */
import { readFileSync } from 'node:fs';
import type { ServedStack } from '../aws/cloudformation-endpoint';
import { listStacks } from '../model/assembly-manifest';
import type { FlowModel, LocalNames } from '../model/flow-model';
import { resolveValue } from '../model/intrinsics';
import { StackIndex } from '../model/stack-template';

interface TemplateJson {
  readonly Resources?: Record<string, { readonly Type?: string }>;
  readonly Outputs?: Record<string, { readonly Value?: unknown; readonly Description?: string }>;
}

/** The served stacks of `model`, with `names` (the run's) and its start time as the creation time. */
export function servedStacks(model: Pick<FlowModel, 'assemblyDirectory' | 'stackNames'>, names: LocalNames, createdAt: Date): ServedStack[] {
  const all = listStacks(model.assemblyDirectory);
  const texts = new Map(all.map((stack) => [stack.templateFile, readFileSync(stack.templateFile, 'utf8')]));
  // every stack's exports and outputs, selected or not: what a cross-stack reference names
  const index = new StackIndex();
  for (const stack of all) index.addOutputs(stack.stackName, JSON.parse(texts.get(stack.templateFile)!) as unknown);
  return all
    .filter((stack) => model.stackNames.includes(stack.stackName))
    .map((stack): ServedStack => {
      const templateBody = texts.get(stack.templateFile)!;
      const template = JSON.parse(templateBody) as TemplateJson;
      const environment = names.environmentOf?.(stack.stackName) ?? { account: names.accountId, region: names.region };
      const resources = Object.entries(template.Resources ?? {}).map(([logicalId, resource]) => ({
        logicalId,
        type: resource.Type ?? 'unknown',
        physicalId: names.ref(`${stack.stackName}/${logicalId}`) ?? `${stack.stackName}-${logicalId}`,
      }));
      const served = outputNames(names, stack.stackName, resources, environment);
      const outputs = Object.entries(template.Outputs ?? {}).flatMap(([key, output]) => {
        try {
          const value = resolveValue(index.link(output.Value, stack.stackName), stack.stackName, served, `output ${key} of stack ${stack.stackName}`);
          return [{ key, value, ...(output.Description === undefined ? {} : { description: output.Description }) }];
        } catch {
          return [];
        }
      });
      const stackId = `arn:aws:cloudformation:${environment.region}:${environment.account}:stack/${stack.stackName}/00000000-0000-4000-8000-${String(createdAt.getTime() % 1e12).padStart(12, '0')}`;
      return { stackName: stack.stackName, stackId, createdAt: createdAt.toISOString(), outputs, resources, templateBody };
    });
}

/**
 * The run's names, and for a resource of the stack the run does not create: its served physical id (`Ref`), an ARN of
 * it in the stack's environment (`Arn`: `arn:aws:<service>:<region>:<account>:<resource type's last part>/<id>`, no
 * Region for IAM), or
 * its physical id (any other attribute).
 */
function outputNames(names: LocalNames, stackName: string, resources: readonly { logicalId: string; type: string; physicalId: string }[], environment: { account: string; region: string }): LocalNames {
  const byKey = new Map(resources.map((resource) => [`${stackName}/${resource.logicalId}`, resource]));
  return {
    region: names.region,
    accountId: names.accountId,
    ...(names.environmentOf === undefined ? {} : { environmentOf: (name: string) => names.environmentOf!(name) }),
    ref: (key) => names.ref(key) ?? byKey.get(key)?.physicalId,
    getAtt: (key, attribute) => {
      const known = names.getAtt(key, attribute);
      const resource = byKey.get(key);
      if (known !== undefined || resource === undefined) return known;
      if (attribute !== 'Arn') return resource.physicalId;
      const [, service = 'unknown', kind = 'resource'] = resource.type.split('::');
      // IAM is global: its ARNs have no Region (arn:aws:iam::<account>:role/<name>), as STS and a profile's role_arn expect
      const region = service.toLowerCase() === 'iam' ? '' : environment.region;
      return `arn:aws:${service.toLowerCase()}:${region}:${environment.account}:${kind.toLowerCase()}/${resource.physicalId}`;
    },
  };
}
