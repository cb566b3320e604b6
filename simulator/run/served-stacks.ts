/**
 * What CloudFormation would report of a served run's stacks (simulator/aws/cloudformation-endpoint.ts): each selected
 * stack of the assembly, its resources with the physical ids the run gave them (a table's local name, a queue's URL, a
 * function's name, a topic's ARN; `<stack>-<logical id>` for a resource the run does not create), and its outputs
 * resolved with the run's local names (an output that cannot be resolved locally, e.g. one importing another
 * account's export, is left out). Read once, when the run is handed over to serve: the assembly directory may be a
 * temporary one.
 */
import { readFileSync } from 'node:fs';
import type { ServedStack } from '../aws/cloudformation-endpoint';
import { listStacks } from '../model/assembly-manifest';
import type { FlowModel, LocalNames } from '../model/flow-model';
import { resolveValue } from '../model/intrinsics';

interface TemplateJson {
  readonly Resources?: Record<string, { readonly Type?: string }>;
  readonly Outputs?: Record<string, { readonly Value?: unknown; readonly Description?: string }>;
}

/** The served stacks of `model`, with `names` (the run's) and its start time as the creation time. */
export function servedStacks(model: Pick<FlowModel, 'assemblyDirectory' | 'stackNames'>, names: LocalNames, createdAt: Date): ServedStack[] {
  return listStacks(model.assemblyDirectory)
    .filter((stack) => model.stackNames.includes(stack.stackName))
    .map((stack): ServedStack => {
      const template = JSON.parse(readFileSync(stack.templateFile, 'utf8')) as TemplateJson;
      const resources = Object.entries(template.Resources ?? {}).map(([logicalId, resource]) => ({
        logicalId,
        type: resource.Type ?? 'unknown',
        physicalId: names.ref(`${stack.stackName}/${logicalId}`) ?? `${stack.stackName}-${logicalId}`,
      }));
      const outputs = Object.entries(template.Outputs ?? {}).flatMap(([key, output]) => {
        try {
          const value = resolveValue(output.Value, stack.stackName, names, `output ${key} of stack ${stack.stackName}`);
          return [{ key, value, ...(output.Description === undefined ? {} : { description: output.Description }) }];
        } catch {
          return [];
        }
      });
      const stackId = `arn:aws:cloudformation:${names.region}:${names.accountId}:stack/${stack.stackName}/00000000-0000-4000-8000-${String(createdAt.getTime() % 1e12).padStart(12, '0')}`;
      return { stackName: stack.stackName, stackId, createdAt: createdAt.toISOString(), outputs, resources };
    });
}
