#!/usr/bin/env node
/**
 * Keeps the built constructs assembly (`.jsii`, from `npm run release:pack` or `jsii`) as the released API that CI
 * compares every later change with (`jsii-diff`, in .ci/run): release/assemblies/idempotent-event-flow-<version>/ gets
 * the assembly and the package.json fields jsii-diff reads. It is a package directory inside the repository, so
 * jsii-diff resolves the assembly's dependencies (aws-cdk-lib, constructs) from the repository's node_modules.
 *
 * Usage: node scripts/release/baseline.mjs     (npm run release:baseline), at release, after the version is set
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const manifest = JSON.parse(fs.readFileSync(path.join(repo, 'package.json'), 'utf8'));
const assembly = JSON.parse(fs.readFileSync(path.join(repo, '.jsii'), 'utf8'));
if (assembly.version !== manifest.version) {
  throw new Error(`.jsii is of version ${assembly.version}, package.json of ${manifest.version}: run npm run release:pack first`);
}
const directory = path.join(repo, 'release', 'assemblies', `${manifest.name}-${manifest.version}`);
fs.mkdirSync(directory, { recursive: true });
fs.copyFileSync(path.join(repo, '.jsii'), path.join(directory, '.jsii'));
const fields = ['name', 'version', 'license', 'author', 'repository', 'main', 'types', 'stability', 'jsii', 'peerDependencies'];
const baseline = {
  ...Object.fromEntries(fields.filter((field) => manifest[field] !== undefined).map((field) => [field, manifest[field]])),
  description: 'The jsii assembly of the released constructs package: the API that CI compares every change with (jsii-diff).',
  private: true,
};
fs.writeFileSync(path.join(directory, 'package.json'), `${JSON.stringify(baseline, null, 2)}\n`);
console.log(`baseline: ${path.relative(repo, directory)} (${Object.keys(assembly.types).length} types)`);
