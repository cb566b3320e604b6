import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

/** A stack of a hand-written cloud assembly. */
export interface FixtureStack {
  readonly template: Record<string, unknown>;
  /** `properties.stackName` of the artifact. @default the artifact id */
  readonly stackName?: string;
  readonly displayName?: string;
}

/** Writes a cloud assembly (manifest.json, templates, nested assemblies) into a new temporary directory. */
export function writeAssembly(
  stacks: Readonly<Record<string, FixtureStack>>,
  nested: Readonly<Record<string, Readonly<Record<string, FixtureStack>>>> = {},
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'ief-model-')),
): string {
  const artifacts: Record<string, unknown> = {};
  for (const [artifactId, stack] of Object.entries(stacks)) {
    const templateFile = `${artifactId}.template.json`;
    fs.writeFileSync(path.join(root, templateFile), JSON.stringify(stack.template));
    artifacts[artifactId] = {
      type: 'aws:cloudformation:stack',
      environment: 'aws://unknown-account/unknown-region',
      properties: { templateFile, ...(stack.stackName === undefined ? {} : { stackName: stack.stackName }) },
      ...(stack.displayName === undefined ? {} : { displayName: stack.displayName }),
    };
  }
  for (const [directoryName, nestedStacks] of Object.entries(nested)) {
    const directory = path.join(root, directoryName);
    fs.mkdirSync(directory);
    writeAssembly(nestedStacks, {}, directory);
    artifacts[directoryName] = { type: 'cdk:cloud-assembly', properties: { directoryName, displayName: directoryName } };
  }
  fs.writeFileSync(path.join(root, 'manifest.json'), JSON.stringify({ version: '55.0.0', artifacts }));
  return root;
}

/** Creates an asset directory with an index.js in the assembly, returning its path relative to the assembly. */
export function writeAsset(assemblyDirectory: string, name: string): string {
  const directory = path.join(assemblyDirectory, name);
  fs.mkdirSync(directory, { recursive: true });
  fs.writeFileSync(path.join(directory, 'index.js'), 'exports.handler = async () => ({});\n');
  return name;
}

/** A Node.js function resource whose code is the asset at `assetPath`. */
export function nodeFunction(assetPath: string, properties: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    Type: 'AWS::Lambda::Function',
    Properties: { Code: { S3Bucket: 'b', S3Key: 'k.zip' }, Handler: 'index.handler', Runtime: 'nodejs22.x', ...properties },
    Metadata: { 'aws:asset:path': assetPath, 'aws:asset:property': 'Code' },
  };
}
