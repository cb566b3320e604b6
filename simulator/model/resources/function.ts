/**
 * `AWS::Lambda::Function` whose code is a directory asset of the cloud assembly and whose runtime is Node.js: the
 * functions the simulator runs in worker threads. Defaults and bounds per the CloudFormation reference of
 * `AWS::Lambda::Function`: `Timeout` 1 to 900 seconds, default 3; `MemorySize` 128 to 10,240 MB, default 128.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { FunctionModel } from '../flow-model';
import type { TemplateResource } from '../stack-template';
import { InvalidTemplateValueError, NotSimulatedError, readInteger, readObject, readString } from '../template-values';

/** `Timeout` in seconds. */
export const FUNCTION_TIMEOUT = { min: 1, max: 900, default: 3 } as const;
/** `MemorySize` in MB. */
export const FUNCTION_MEMORY_SIZE = { min: 128, max: 10_240, default: 128 } as const;

/**
 * Reads a function. Inline code (`Code.ZipFile`), container images, code that is not a directory asset of the
 * assembly and non-Node.js runtimes are a {@link NotSimulatedError}. Layers and reserved concurrency, which the
 * simulator does not emulate, are said in `notes`.
 */
export function readFunction(resource: TemplateResource, notes: string[]): FunctionModel {
  const properties = resource.properties;
  const code = readObject(resource, 'Code', properties.Code) ?? {};
  if (properties.PackageType === 'Image' || code.ImageUri !== undefined) {
    throw new NotSimulatedError(resource, 'its code is a container image; only Node.js code assets are run');
  }
  if (code.ZipFile !== undefined) throw new NotSimulatedError(resource, 'its code is inline (Code.ZipFile); only Node.js code assets are run');
  const runtime = readString(resource, 'Runtime', properties.Runtime);
  if (runtime === undefined || !runtime.startsWith('nodejs')) {
    throw new NotSimulatedError(resource, `runtime ${runtime ?? '(none)'} is not simulated (only Node.js runtimes)`);
  }
  const assetDirectory = assetDirectoryOf(resource, code);
  const handler = readString(resource, 'Handler', properties.Handler);
  if (handler === undefined) throw new InvalidTemplateValueError(resource, 'Handler', undefined, 'it is required for code assets');
  const environment = readObject(resource, 'Environment', properties.Environment) ?? {};
  const variables = readObject(resource, 'Environment.Variables', environment.Variables) ?? {};
  if (properties.Layers !== undefined) notes.push(`${resource.label}: Layers are not loaded; code the function imports from a layer is missing`);
  if (properties.ReservedConcurrentExecutions !== undefined) {
    notes.push(`${resource.label}: ReservedConcurrentExecutions ${JSON.stringify(properties.ReservedConcurrentExecutions)} is not enforced`);
  }
  const loggingConfig = readObject(resource, 'LoggingConfig', properties.LoggingConfig) ?? {};
  const applicationLogLevel = readString(resource, 'LoggingConfig.ApplicationLogLevel', loggingConfig.ApplicationLogLevel);
  return {
    ...resource.modelled(),
    ...(applicationLogLevel !== undefined && loggingConfig.LogFormat === 'JSON' ? { applicationLogLevel } : {}),
    assetDirectory,
    handler,
    runtime,
    timeoutSeconds: readInteger(resource, 'Timeout', properties.Timeout, FUNCTION_TIMEOUT, FUNCTION_TIMEOUT.default),
    memorySizeMb: readInteger(resource, 'MemorySize', properties.MemorySize, FUNCTION_MEMORY_SIZE, FUNCTION_MEMORY_SIZE.default),
    environment: variables,
  };
}

/**
 * The absolute asset directory: the `aws:asset:path` metadata (relative to the assembly that lists the stack), else,
 * for a template synthesized without asset metadata, the file asset of the stack's asset manifests that `Code.S3Key`
 * is published as.
 */
function assetDirectoryOf(resource: TemplateResource, code: Readonly<Record<string, unknown>>): string {
  const assetPath = resource.metadata['aws:asset:path'];
  const assetProperty = resource.metadata['aws:asset:property'];
  let directory: string;
  if (typeof assetPath === 'string' && (assetProperty === undefined || assetProperty === 'Code')) {
    directory = path.resolve(resource.template.assemblyDirectory, assetPath);
  } else {
    const source = typeof code.S3Key === 'string' ? resource.template.fileAssets.get(code.S3Key) : undefined;
    if (source === undefined) {
      throw new NotSimulatedError(
        resource,
        `its code is not an asset of the cloud assembly (no aws:asset:path metadata, and its S3Key ${JSON.stringify(code.S3Key ?? null)} is no file asset of the stack's asset manifests)`,
      );
    }
    directory = source;
  }
  let isDirectory: boolean;
  try {
    isDirectory = fs.statSync(directory).isDirectory();
  } catch {
    throw new NotSimulatedError(resource, `its code asset ${directory} does not exist`);
  }
  if (!isDirectory) throw new NotSimulatedError(resource, `its code asset ${directory} is a file (an archive); only directory assets are run`);
  return directory;
}
