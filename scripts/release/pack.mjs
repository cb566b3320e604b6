#!/usr/bin/env node
/**
 * The release's packing step: builds the four packages from a clean tree (`npm run clean`, then jsii over the
 * constructs, failing on any warning, and tsc over the runtime, the operator package and the simulator) and packs them with `npm pack`, into the directory given
 * (default `dist-release/`). It prints one line per tarball (its path and size) on stdout, or with `--json` npm's JSON
 * report of the four tarballs (thousands of lines: every file of each package) instead; npm's own lines go to stderr.
 *
 * The packages have no `prepack`/`prepare` script, as jsii libraries built by projen and aws-cdk-lib publish: a
 * lifecycle script ships inside the published package.json, and `jsii-pacmak` runs `npm pack` on the installed package
 * (the Python, Java, .NET and Go route: docs/OTHER-LANGUAGES.md), where a build script finds no sources and deletes
 * what it was to pack. So the build happens here, once, and `npm publish <tarball>` publishes what this step packed.
 *
 * Usage: node scripts/release/pack.mjs [--json] [destination]     (npm run release:pack -- [--json] [destination])
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const args = process.argv.slice(2);
const json = args.includes('--json');
const positional = args.filter((arg) => arg !== '--json');
if (positional.length > 1 || positional.some((arg) => arg.startsWith('-'))) {
  process.stderr.write(`usage: node scripts/release/pack.mjs [--json] [destination], not: ${args.join(' ')}\n`);
  process.exit(2);
}
const destination = path.resolve(positional[0] ?? path.join(repo, 'dist-release'));

function npm(args) {
  // npm's own output goes to stderr, so stdout carries the JSON report only
  const result = spawnSync('npm', args, { cwd: repo, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 64 * 1024 * 1024 });
  if (result.error !== undefined || result.status !== 0) {
    process.stderr.write(result.stdout ?? '');
    throw new Error(`npm ${args.join(' ')} failed (status ${result.status}${result.error === undefined ? '' : `, ${result.error.message}`})`);
  }
  return result.stdout;
}

npm(['run', '--silent', 'clean']);
// jsii over the constructs with 0 errors and 0 warnings (a warning would ship in the assembly), then the workspaces
process.stderr.write(npm(['exec', '--offline', '--', 'jsii', '--fail-on-warnings']));
process.stderr.write(npm(['run', '--silent', 'build', '--workspaces']));
fs.mkdirSync(destination, { recursive: true });
const stdout = npm(['pack', '--json', '--workspaces', '--include-workspace-root', '--pack-destination', destination]);
const report = JSON.parse(stdout.slice(stdout.search(/^\[/m)));
const summary = report.map((tarball) => `packed ${tarball.name}@${tarball.version}: ${path.join(destination, tarball.filename)} (${tarball.entryCount} files, ${tarball.size} bytes)\n`).join('');
if (json) {
  process.stderr.write(summary);
  process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
} else {
  process.stdout.write(summary);
}
