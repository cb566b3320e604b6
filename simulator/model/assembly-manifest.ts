/**
 * The stacks a cloud assembly holds, from its `manifest.json` (cloud assembly schema): artifacts of type
 * `aws:cloudformation:stack` with their `properties.templateFile`, and, for CDK Stages, the nested assemblies of
 * artifacts of type `cdk:cloud-assembly` in `properties.directoryName`, read recursively.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

/** A stack artifact of the assembly. */
export interface AssemblyStack {
  /** The CloudFormation stack name (`properties.stackName`, else the artifact id). */
  readonly stackName: string;
  /** The artifact id in the manifest. */
  readonly artifactId: string;
  /** The construct path of the stack (`displayName`), e.g. `Stage/Stack`. @default the artifact id */
  readonly displayName: string;
  /** Absolute path of the assembly directory whose manifest lists the stack; template and asset paths are relative to it. */
  readonly assemblyDirectory: string;
  /** Absolute path of the template file. */
  readonly templateFile: string;
  /** Absolute paths of the asset manifests (`cdk:asset-manifest` artifacts) the stack depends on. */
  readonly assetManifestFiles: readonly string[];
  /** The artifact's `environment`, `aws://<account>/<region>` (`unknown-account`, `unknown-region` when agnostic). @default - none given */
  readonly environment?: string;
}

/** Lists the stacks of the assembly in `assemblyDirectory` and of its nested assemblies, in manifest order. */
export function listStacks(assemblyDirectory: string): AssemblyStack[] {
  return listStacksIn(path.resolve(assemblyDirectory), 0);
}

function listStacksIn(directory: string, depth: number): AssemblyStack[] {
  const manifestFile = path.join(directory, 'manifest.json');
  if (!fs.existsSync(manifestFile)) {
    throw new Error(`No cloud assembly in ${directory}: manifest.json is missing (synthesize the app first, e.g. cdk synth --output ${directory})`);
  }
  let manifest: unknown;
  try {
    manifest = JSON.parse(fs.readFileSync(manifestFile, 'utf8'));
  } catch (error) {
    throw new Error(`Cloud assembly manifest ${manifestFile} is not valid JSON: ${(error as Error).message}`);
  }
  const artifacts = isObject(manifest) && isObject(manifest.artifacts) ? manifest.artifacts : {};
  const stacks: AssemblyStack[] = [];
  for (const [artifactId, artifact] of Object.entries(artifacts)) {
    if (!isObject(artifact)) continue;
    const properties = isObject(artifact.properties) ? artifact.properties : {};
    if (artifact.type === 'aws:cloudformation:stack' && typeof properties.templateFile === 'string') {
      const dependencies = Array.isArray(artifact.dependencies) ? artifact.dependencies : [];
      const assetManifestFiles = dependencies.flatMap((dependency) => {
        const other = typeof dependency === 'string' ? artifacts[dependency] : undefined;
        if (!isObject(other) || other.type !== 'cdk:asset-manifest' || !isObject(other.properties) || typeof other.properties.file !== 'string') return [];
        return [path.resolve(directory, other.properties.file)];
      });
      stacks.push({
        stackName: typeof properties.stackName === 'string' ? properties.stackName : artifactId,
        artifactId,
        displayName: typeof artifact.displayName === 'string' ? artifact.displayName : artifactId,
        assemblyDirectory: directory,
        templateFile: path.resolve(directory, properties.templateFile),
        assetManifestFiles,
        ...(typeof artifact.environment === 'string' ? { environment: artifact.environment } : {}),
      });
    } else if (artifact.type === 'cdk:cloud-assembly' && typeof properties.directoryName === 'string') {
      if (depth >= 20) throw new Error(`Cloud assembly ${directory}: nested assemblies deeper than 20 levels (artifact ${artifactId})`);
      stacks.push(...listStacksIn(path.resolve(directory, properties.directoryName), depth + 1));
    }
  }
  return stacks;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
