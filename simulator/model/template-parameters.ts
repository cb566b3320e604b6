/**
 * Template parameters, replaced by their `Default` when the assembly is read, as a `cdk deploy` without parameter
 * overrides would deploy them. A parameter whose value CloudFormation looks up at deploy time (the
 * `AWS::SSM::Parameter::Value<...>` types, whose `Default` is the SSM parameter's name) or that has no `Default` is
 * left as it is: a `Ref` of it then stays unresolvable.
 */

/** The value a parameter takes: a string, or a list for `CommaDelimitedList` and `List<...>` types. */
export type ParameterValue = string | readonly string[];

/** Reads a template's `Parameters` section into the values of the parameters that have a usable `Default`. */
export function parameterDefaults(parameters: unknown): ReadonlyMap<string, ParameterValue> {
  const values = new Map<string, ParameterValue>();
  if (!isObject(parameters)) return values;
  for (const [name, declaration] of Object.entries(parameters)) {
    if (!isObject(declaration)) continue;
    const type = typeof declaration.Type === 'string' ? declaration.Type : 'String';
    const defaultValue = declaration.Default;
    if (type.startsWith('AWS::SSM::Parameter::') || defaultValue === undefined || defaultValue === null) continue;
    if (typeof defaultValue !== 'string' && typeof defaultValue !== 'number' && typeof defaultValue !== 'boolean') continue;
    const text = String(defaultValue);
    // "CommaDelimitedList: ... Each member string is space trimmed." (CloudFormation User Guide, Parameters)
    values.set(name, type === 'CommaDelimitedList' || type.startsWith('List<') ? text.split(',').map((member) => member.trim()) : text);
  }
  return values;
}

/**
 * Returns `value` with every `{ Ref: parameter }` replaced by the parameter's value and every `${parameter}` of an
 * `Fn::Sub` string replaced by it (string parameters only; a variable of the `Fn::Sub` map of the same name wins).
 */
export function substituteParameters(value: unknown, parameters: ReadonlyMap<string, ParameterValue>): unknown {
  if (parameters.size === 0) return value;
  if (Array.isArray(value)) return value.map((element) => substituteParameters(element, parameters));
  if (!isObject(value)) return value;
  const keys = Object.keys(value);
  if (keys.length === 1 && keys[0] === 'Ref' && typeof value.Ref === 'string') {
    return parameters.get(value.Ref) ?? value;
  }
  if (keys.length === 1 && keys[0] === 'Fn::Sub') return { 'Fn::Sub': substituteInSub(value['Fn::Sub'], parameters) };
  return Object.fromEntries(Object.entries(value).map(([key, element]) => [key, substituteParameters(element, parameters)]));
}

function substituteInSub(argument: unknown, parameters: ReadonlyMap<string, ParameterValue>): unknown {
  if (typeof argument === 'string') return substituteInSubText(argument, parameters, {});
  if (Array.isArray(argument) && argument.length === 2 && typeof argument[0] === 'string' && isObject(argument[1])) {
    const variables = substituteParameters(argument[1], parameters) as Record<string, unknown>;
    return [substituteInSubText(argument[0], parameters, variables), variables];
  }
  return argument;
}

function substituteInSubText(text: string, parameters: ReadonlyMap<string, ParameterValue>, variables: Record<string, unknown>): string {
  return text.replace(/\$\{([^}]*)\}/g, (match, content: string) => {
    const name = content.trim();
    if (content.startsWith('!') || Object.prototype.hasOwnProperty.call(variables, name)) return match;
    const parameter = parameters.get(name);
    // A default that itself holds "${" must stay literal text after substitution: "${!" is Fn::Sub's escape.
    return typeof parameter === 'string' ? parameter.replaceAll('${', '${!') : match;
  });
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
