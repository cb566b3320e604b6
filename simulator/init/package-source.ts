/**
 * Where the starter app `init` writes gets this project's four packages from: the npm registry at the simulator's own
 * version, or release tarballs (a release trial, a private mirror, before a version is published). `--tarballs <dir>`
 * names a directory holding the four; else, when the simulator that runs `init` was itself installed from a tarball
 * (`npm install ./idempotent-event-flow-simulator-<version>.tgz`, `npx --package <tarball>`), the app takes the tarballs
 * it came from, so `npm install` in the app installs what the user has rather than a version the registry may lack.
 */
import { existsSync, readFileSync } from 'node:fs';
import * as path from 'node:path';

/** The four packages the starter depends on, by the placeholder of its package.json that takes each one's spec. */
export const STARTER_PACKAGES = {
  constructsSpec: 'idempotent-event-flow',
  runtimeSpec: '@idempotent-event-flow/runtime',
  operatorSpec: '@idempotent-event-flow/operator',
  simulatorSpec: '@idempotent-event-flow/simulator',
} as const;

/** A placeholder of the starter's package.json naming one of its four packages' specs. */
export type PackageSpecKey = keyof typeof STARTER_PACKAGES;

/** Where the starter's four packages come from: each one's package.json spec, and the words that say so. */
export interface PackageSource {
  readonly specs: Readonly<Record<PackageSpecKey, string>>;
  /** E.g. `version 1.0.0 from the npm registry`, or `the tarballs in /tmp/release`. */
  readonly said: string;
  /** What the user must know of these specs, printed after where they come from. @default nothing */
  readonly note?: string;
}

/** What `init` says after writing the tarballs' `file:` specs into the app's package.json. */
export const TARBALL_SPECS_NOTE =
  "They are absolute file: paths: the app installs (npm install, npm ci, its CI workflow) only where they exist, as on this machine; once the packages are published, set the four to the version in the app's package.json.";

/** The file names a package's tarball may have: `npm pack`'s (`<scope>-<name>-<version>.tgz`), or without the version. */
export function tarballNames(packageName: string, version: string): string[] {
  const base = packageName.replace(/^@/, '').replace('/', '-');
  return [`${base}-${version}.tgz`, `${base}.tgz`];
}

const specKeys = Object.keys(STARTER_PACKAGES) as PackageSpecKey[];
const fileSpec = (tarball: string) => `file:${tarball.split(path.sep).join('/')}`;

/** The four tarballs of `version` in `directory` (absolute paths), or the file names not found there. */
export function tarballsIn(directory: string, version: string): { readonly tarballs: Record<PackageSpecKey, string> } | { readonly missing: string[] } {
  const found: Partial<Record<PackageSpecKey, string>> = {};
  const missing: string[] = [];
  for (const key of specKeys) {
    const names = tarballNames(STARTER_PACKAGES[key], version);
    const name = names.find((candidate) => existsSync(path.join(directory, candidate)));
    if (name === undefined) missing.push(names[0]!);
    else found[key] = path.resolve(directory, name);
  }
  return missing.length > 0 ? { missing } : { tarballs: found as Record<PackageSpecKey, string> };
}

/**
 * The tarballs the simulator at `simulatorRoot` was installed from, when it was: the project above its `node_modules`
 * names it with a `file:` spec of a `.tgz`; the other three packages are the project's own tarball specs, or their
 * tarballs of `version` beside the simulator's. Undefined when it was not installed from a tarball, or a tarball is
 * missing.
 */
export function installedTarballs(simulatorRoot: string, version: string): Record<PackageSpecKey, string> | undefined {
  const parts = path.resolve(simulatorRoot).split(path.sep);
  const modules = parts.lastIndexOf('node_modules');
  if (modules <= 0) return undefined;
  const project = parts.slice(0, modules).join(path.sep) || path.sep;
  let manifest: { dependencies?: Record<string, string>; devDependencies?: Record<string, string>; optionalDependencies?: Record<string, string> };
  try {
    manifest = JSON.parse(readFileSync(path.join(project, 'package.json'), 'utf8')) as typeof manifest;
  } catch {
    return undefined;
  }
  const specOf = (name: string) => {
    const spec = manifest.dependencies?.[name] ?? manifest.devDependencies?.[name] ?? manifest.optionalDependencies?.[name];
    return spec !== undefined && spec.startsWith('file:') && spec.endsWith('.tgz') ? path.resolve(project, spec.slice('file:'.length)) : undefined;
  };
  const simulator = specOf(STARTER_PACKAGES.simulatorSpec);
  if (simulator === undefined || !existsSync(simulator)) return undefined;
  const beside = tarballsIn(path.dirname(simulator), version);
  const found: Partial<Record<PackageSpecKey, string>> = {};
  for (const key of specKeys) {
    const own = key === 'simulatorSpec' ? simulator : specOf(STARTER_PACKAGES[key]);
    const tarball = own !== undefined && existsSync(own) ? own : 'tarballs' in beside ? beside.tarballs[key] : undefined;
    if (tarball === undefined) return undefined;
    found[key] = tarball;
  }
  return found as Record<PackageSpecKey, string>;
}

/** The four packages as `file:` specs of `tarballs`, said as where they are. */
export function tarballSource(tarballs: Record<PackageSpecKey, string>, said: string): PackageSource {
  return { specs: Object.fromEntries(specKeys.map((key) => [key, fileSpec(tarballs[key])])) as Record<PackageSpecKey, string>, said, note: TARBALL_SPECS_NOTE };
}

/** The four packages from the npm registry, at `version` exactly. */
export function registrySource(version: string): PackageSource {
  return { specs: Object.fromEntries(specKeys.map((key) => [key, version])) as Record<PackageSpecKey, string>, said: `version ${version} from the npm registry` };
}
