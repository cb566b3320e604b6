/**
 * One stack's synthesized template, its resources with template parameters already replaced by their defaults, and
 * how a property value points at another resource of the same stack.
 */
import type { ModelledResource, ResourceKey } from './flow-model';
import { parameterDefaults, substituteParameters } from './template-parameters';
import { isPlainObject, type ResourceLabel } from './template-values';

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
      ? (substituteParameters(declaration.Properties, template.parameters) as Record<string, unknown>)
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
   */
  constructor(
    readonly stackName: string,
    readonly assemblyDirectory: string,
    template: unknown,
  ) {
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

  /** The resource `{ Ref: id }` names, when `value` is exactly that and the resource has one of `types`. */
  refTarget(value: unknown, types: readonly string[]): TemplateResource | undefined {
    if (!isPlainObject(value) || Object.keys(value).length !== 1 || typeof value.Ref !== 'string') return undefined;
    return this.resource(value.Ref, types);
  }

  /** The resource `Fn::GetAtt` names (`[id, attribute]` or `"id.attribute"`), when the attribute is one of `attributes`. */
  getAttTarget(value: unknown, types: readonly string[], attributes: readonly string[]): TemplateResource | undefined {
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
   * `type` sets `nameProperty` to that name: a hard-coded ARN of a resource the template itself creates by name.
   */
  arnTarget(value: unknown, service: string, type: string, nameProperty: string): TemplateResource | undefined {
    if (typeof value !== 'string') return undefined;
    const parts = value.split(':');
    if (parts.length !== 6 || parts[0] !== 'arn' || parts[2] !== service) return undefined;
    return this.resources.find((resource) => resource.type === type && resource.properties[nameProperty] === parts[5]);
  }
}
