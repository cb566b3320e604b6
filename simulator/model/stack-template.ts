/**
 * One stack's synthesized template, its resources with template parameters already replaced by their defaults, and
 * how a property value points at another resource: of the same stack, or of another stack of the assembly through a
 * cross-stack reference (`Fn::GetStackOutput`, as CDK writes a reference to another stack, or `Fn::ImportValue` of an
 * export), which is replaced by a {@link CrossStackValue} when the assembly is read.
 */
import { CrossStackValue } from './cross-stack-value';
import type { ModelledResource, ResourceKey } from './flow-model';
import { resolveValue } from './intrinsics';
import { parameterDefaults, substituteParameters } from './template-parameters';
import type { StackEnvironments } from './stack-environments';
import { isPlainObject, type ResourceLabel } from './template-values';

export { CrossStackValue };

/** How deep outputs that import other outputs are followed. */
const MAX_CROSS_STACK_DEPTH = 10;

/**
 * The stacks of an assembly as cross-stack references see them: every stack's outputs (selected or not), and the
 * templates of the selected stacks, which references resolve to.
 */
export class StackIndex {
  private readonly outputs = new Map<string, ReadonlyMap<string, unknown>>();
  private readonly exports = new Map<string, { readonly stackName: string; readonly value: unknown }>();
  private readonly templates = new Map<string, StackTemplate>();

  /** Records the outputs (and exports) of a stack's template; the first stack of a name wins. */
  addOutputs(stackName: string, template: unknown): void {
    if (this.outputs.has(stackName)) return;
    const body = isPlainObject(template) ? template : {};
    const parameters = parameterDefaults(body.Parameters);
    const outputs = new Map<string, unknown>();
    for (const [name, output] of Object.entries(isPlainObject(body.Outputs) ? body.Outputs : {})) {
      if (!isPlainObject(output) || output.Value === undefined) continue;
      const value = substituteParameters(output.Value, parameters);
      outputs.set(name, value);
      const exportName = isPlainObject(output.Export) ? literalName(substituteParameters(output.Export.Name, parameters), stackName) : undefined;
      if (exportName !== undefined && !this.exports.has(exportName)) this.exports.set(exportName, { stackName, value });
    }
    this.outputs.set(stackName, outputs);
  }

  /** Makes a selected stack's resources reachable by cross-stack references. */
  register(template: StackTemplate): void {
    this.templates.set(template.stackName, template);
  }

  /** The selected stack of this name. */
  template(stackName: string): StackTemplate | undefined {
    return this.templates.get(stackName);
  }

  /** Every selected stack's template. */
  allTemplates(): readonly StackTemplate[] {
    return [...this.templates.values()];
  }

  /** Each stack's environment, when the stacks span several (./stack-environments.ts). @default none */
  environments?: StackEnvironments;

  /** Whether the assembly has a stack of this name (selected or not). */
  hasStack(stackName: string): boolean {
    return this.outputs.has(stackName);
  }

  /**
   * Returns `value` (of stack `stackName`) with each cross-stack reference to an output of the assembly replaced by a
   * {@link CrossStackValue}; a reference to nothing the assembly has is left as it is.
   */
  link(value: unknown, stackName: string, depth = 0): unknown {
    if (Array.isArray(value)) return value.map((element) => this.link(element, stackName, depth));
    if (!isPlainObject(value)) return value;
    const keys = Object.keys(value);
    if (keys.length === 1 && depth < MAX_CROSS_STACK_DEPTH) {
      const target = keys[0] === 'Fn::ImportValue' ? this.imported(value['Fn::ImportValue'], stackName) : keys[0] === 'Fn::GetStackOutput' ? this.output(value['Fn::GetStackOutput']) : undefined;
      if (target !== undefined) return new CrossStackValue(target.stackName, this.link(target.value, target.stackName, depth + 1), value);
    }
    return Object.fromEntries(Object.entries(value).map(([key, element]) => [key, this.link(element, stackName, depth)]));
  }

  private imported(name: unknown, stackName: string): { readonly stackName: string; readonly value: unknown } | undefined {
    const exportName = literalName(name, stackName);
    return exportName === undefined ? undefined : this.exports.get(exportName);
  }

  private output(argument: unknown): { readonly stackName: string; readonly value: unknown } | undefined {
    if (!isPlainObject(argument) || typeof argument.StackName !== 'string' || typeof argument.OutputName !== 'string') return undefined;
    const outputs = this.outputs.get(argument.StackName);
    return outputs?.has(argument.OutputName) ? { stackName: argument.StackName, value: outputs.get(argument.OutputName) } : undefined;
  }
}

/** An export name: a string, or an expression of literals and pseudo parameters (e.g. `${AWS::StackName}-Arn`). */
function literalName(name: unknown, stackName: string): string | undefined {
  if (typeof name === 'string') return name;
  try {
    // no resource has a name here: only literals and the stack's pseudo parameters resolve
    return resolveValue(name, stackName, { ref: () => undefined, getAtt: () => undefined, region: 'us-east-1', accountId: '000000000000' }, 'an export name');
  } catch {
    return undefined;
  }
}

/** A resource of a stack template. */
export class TemplateResource implements ResourceLabel {
  readonly key: ResourceKey;
  /** `Properties`, with template parameters replaced by their defaults. @default {} */
  readonly properties: Readonly<Record<string, unknown>>;
  /** `Metadata` @default {} */
  readonly metadata: Readonly<Record<string, unknown>>;
  /** `Condition`: the resource exists only when it holds. */
  readonly condition?: string;
  /** The `aws:cdk:path` metadata. */
  readonly constructPath?: string;

  constructor(
    readonly template: StackTemplate,
    readonly logicalId: string,
    readonly type: string,
    declaration: Readonly<Record<string, unknown>>,
  ) {
    this.key = `${template.stackName}/${logicalId}`;
    this.properties = isPlainObject(declaration.Properties)
      ? (template.index.link(substituteParameters(declaration.Properties, template.parameters), template.stackName) as Record<string, unknown>)
      : {};
    this.metadata = isPlainObject(declaration.Metadata) ? declaration.Metadata : {};
    this.condition = typeof declaration.Condition === 'string' ? declaration.Condition : undefined;
    const path = this.metadata['aws:cdk:path'];
    this.constructPath = typeof path === 'string' ? path : undefined;
  }

  /** `<type> <stack>/<logical id> (<construct path>)`: how messages name the resource. */
  get label(): string {
    return `${this.type} ${this.key}${this.constructPath === undefined ? '' : ` (${this.constructPath})`}`;
  }

  /** The fields every model carries. */
  modelled(): ModelledResource {
    return {
      key: this.key,
      stackName: this.template.stackName,
      logicalId: this.logicalId,
      ...(this.constructPath === undefined ? {} : { constructPath: this.constructPath }),
    };
  }
}

/** The template of one stack of the cloud assembly. */
export class StackTemplate {
  /** Template parameters that have a usable default. */
  readonly parameters: ReturnType<typeof parameterDefaults>;
  /** The resources, in template order. */
  readonly resources: readonly TemplateResource[];
  private readonly byLogicalId: ReadonlyMap<string, TemplateResource>;

  /**
   * @param stackName the CloudFormation stack name
   * @param assemblyDirectory absolute path of the (possibly nested) cloud assembly whose manifest lists the stack:
   *   asset paths in the template's metadata are relative to it
   * @param template the parsed template JSON
   * @param index the assembly's stacks, for cross-stack references; the template registers itself in it
   * @param fileAssets the stack's file assets by S3 object key (absolute source paths, from its asset manifests): where
   *   a function's code is when the template has no asset metadata
   */
  constructor(
    readonly stackName: string,
    readonly assemblyDirectory: string,
    template: unknown,
    readonly index: StackIndex = new StackIndex(),
    readonly fileAssets: ReadonlyMap<string, string> = new Map(),
  ) {
    index.addOutputs(stackName, template);
    index.register(this);
    const body = isPlainObject(template) ? template : {};
    this.parameters = parameterDefaults(body.Parameters);
    const declarations = isPlainObject(body.Resources) ? body.Resources : {};
    this.resources = Object.entries(declarations)
      .filter((entry): entry is [string, Record<string, unknown>] => isPlainObject(entry[1]) && typeof entry[1].Type === 'string')
      .map(([logicalId, declaration]) => new TemplateResource(this, logicalId, declaration.Type as string, declaration));
    this.byLogicalId = new Map(this.resources.map((resource) => [resource.logicalId, resource]));
  }

  /** The resource with this logical id, when it has one of `types`. */
  resource(logicalId: string, types: readonly string[]): TemplateResource | undefined {
    const resource = this.byLogicalId.get(logicalId);
    return resource !== undefined && types.includes(resource.type) ? resource : undefined;
  }

  /** The selected stack a cross-stack value is of, or undefined when `value` is not one (or its stack is not selected). */
  private crossStack(value: unknown): StackTemplate | undefined {
    return value instanceof CrossStackValue ? this.index.template(value.stackName) : undefined;
  }

  /** The resource `{ Ref: id }` names, when `value` is exactly that and the resource has one of `types`. */
  refTarget(value: unknown, types: readonly string[]): TemplateResource | undefined {
    if (value instanceof CrossStackValue) return this.crossStack(value)?.refTarget(value.value, types);
    if (!isPlainObject(value) || Object.keys(value).length !== 1 || typeof value.Ref !== 'string') return undefined;
    return this.resource(value.Ref, types);
  }

  /** The resource `Fn::GetAtt` names (`[id, attribute]` or `"id.attribute"`), when the attribute is one of `attributes`. */
  getAttTarget(value: unknown, types: readonly string[], attributes: readonly string[]): TemplateResource | undefined {
    if (value instanceof CrossStackValue) return this.crossStack(value)?.getAttTarget(value.value, types, attributes);
    if (!isPlainObject(value) || Object.keys(value).length !== 1) return undefined;
    const argument = value['Fn::GetAtt'];
    let logicalId: unknown;
    let attribute: unknown;
    if (Array.isArray(argument) && argument.length === 2) [logicalId, attribute] = argument;
    else if (typeof argument === 'string' && argument.includes('.')) {
      const dot = argument.indexOf('.');
      [logicalId, attribute] = [argument.slice(0, dot), argument.slice(dot + 1)];
    }
    if (typeof logicalId !== 'string' || typeof attribute !== 'string' || !attributes.includes(attribute)) return undefined;
    return this.resource(logicalId, types);
  }

  /**
   * The resource a literal ARN names (`arn:<partition>:<service>:<region>:<account>:<name>`), when a resource of
   * `type` sets `nameProperty` to that name: a hard-coded ARN of a resource the template itself creates by name, or, in
   * a run whose stacks span environments (the literal ARN CDK writes across them), one that the other selected stack of
   * the ARN's account and Region creates by that name.
   */
  arnTarget(value: unknown, service: string, type: string, nameProperty: string): TemplateResource | undefined {
    if (value instanceof CrossStackValue) return this.crossStack(value)?.arnTarget(value.value, service, type, nameProperty);
    const literal = typeof value === 'string' ? value : literalArn(value);
    if (literal === undefined) return undefined;
    const parts = literal.split(':');
    if (parts.length !== 6 || parts[0] !== 'arn' || parts[2] !== service) return undefined;
    const named = (template: StackTemplate) => template.resources.find((resource) => resource.type === type && resource.properties[nameProperty] === parts[5]);
    const own = named(this);
    if (own !== undefined) return own;
    // a literal ARN CDK writes for a resource of another environment (issue 41, docs/CROSS-ACCOUNT.md): the resource of
    // that name of another selected stack in the ARN's account and Region (only in a run that spans environments)
    const environments = this.index.environments;
    if (environments === undefined) return undefined;
    const others = this.index.allTemplates().flatMap((template) => {
      const environment = environments.get(template.stackName);
      if (template === this || environment?.region !== parts[3] || environment.account !== parts[4]) return [];
      const found = named(template);
      return found === undefined ? [] : [found];
    });
    return others.length === 1 ? others[0] : undefined;
  }
}

/**
 * The string of `{ "Fn::Join": ["", [...]] }` whose parts are literals and `Ref AWS::Partition` (taken as `aws`): how
 * CDK writes the ARN of a resource of another environment by its physical name. Undefined for anything else.
 */
function literalArn(value: unknown): string | undefined {
  if (!isPlainObject(value) || !Array.isArray(value['Fn::Join'])) return undefined;
  const [delimiter, parts] = value['Fn::Join'] as unknown[];
  if (delimiter !== '' || !Array.isArray(parts)) return undefined;
  let text = '';
  for (const part of parts) {
    if (typeof part === 'string') text += part;
    else if (isPlainObject(part) && part.Ref === 'AWS::Partition') text += 'aws';
    else return undefined;
  }
  return text;
}
