#!/usr/bin/env node
/**
 * Sets the version of the four packages in one step (they are released together at one version): the four
 * package.json files (`npm version --workspaces --include-workspace-root`, no git tag), the simulator's exact
 * dependency on the operator package (which `npm version` leaves as it was), the lock file
 * (`npm install --package-lock-only`), and CHANGELOG.md (its [Unreleased] section becomes the version's, dated today,
 * UTC, under a new empty [Unreleased]).
 *
 * Usage: node scripts/release/version.mjs <X.Y.Z> [--date YYYY-MM-DD]     (npm run release:version -- 1.0.0)
 * Then: npm run release:pack (the tarballs), npm run release:baseline (the API baseline jsii-diff compares with),
 * commit, tag vX.Y.Z, and `npm publish <tarball>` for each of the four.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const [version, ...rest] = process.argv.slice(2);
if (version === undefined || !/^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/.test(version)) {
  console.error(`usage: npm run release:version -- <X.Y.Z> [--date YYYY-MM-DD] (got ${JSON.stringify(version ?? '')}: not a SemVer version)`);
  process.exit(2);
}
const dateIndex = rest.indexOf('--date');
const date = dateIndex >= 0 ? rest[dateIndex + 1] : new Date().toISOString().slice(0, 10);
if (date === undefined || !/^\d{4}-\d{2}-\d{2}$/.test(date)) {
  console.error(`--date must be YYYY-MM-DD (got ${JSON.stringify(date ?? '')})`);
  process.exit(2);
}

const changelogPath = path.join(repo, 'CHANGELOG.md');
const changelog = fs.readFileSync(changelogPath, 'utf8');
if (changelog.includes(`\n## [${version}]`)) {
  console.error(`CHANGELOG.md already has a section for ${version}`);
  process.exit(1);
}
if (!changelog.includes('\n## [Unreleased]\n')) {
  console.error('CHANGELOG.md has no "## [Unreleased]" section to release');
  process.exit(1);
}

function npm(args) {
  const result = spawnSync('npm', args, { cwd: repo, stdio: 'inherit' });
  if (result.status !== 0) throw new Error(`npm ${args.join(' ')} failed (status ${result.status})`);
}
// --no-workspaces-update: npm would otherwise update the install right away, while the simulator still pins the
// operator package's old version, which then is no workspace's: npm would fetch it from the registry (404 before the
// first release). The simulator's pin is set next, then the lock file is written.
npm(['version', version, '--no-git-tag-version', '--allow-same-version', '--workspaces', '--include-workspace-root', '--no-workspaces-update']);
// the simulator depends on the operator package of its own version (its bin hands simulate, verify and init to the simulator)
const simulatorManifestPath = path.join(repo, 'simulator', 'package.json');
const simulatorManifest = JSON.parse(fs.readFileSync(simulatorManifestPath, 'utf8'));
simulatorManifest.dependencies['@idempotent-event-flow/operator'] = version;
fs.writeFileSync(simulatorManifestPath, `${JSON.stringify(simulatorManifest, null, 2)}\n`);
npm(['install', '--package-lock-only', '--no-audit', '--no-fund']);

const released = changelog
  .replace('\n## [Unreleased]\n', `\n## [Unreleased]\n\n## [${version}] - ${date}\n`)
  .replace(/\n\[Unreleased\]: .*\n/, (line) => `${line}[${version}]: https://github.com/idempotent-event-flow/idempotent-event-flow/releases/tag/v${version}\n`);
fs.writeFileSync(changelogPath, released);

for (const directory of ['.', 'lambda', 'operator', 'simulator']) {
  const manifest = JSON.parse(fs.readFileSync(path.join(repo, directory, 'package.json'), 'utf8'));
  if (manifest.version !== version) throw new Error(`${directory}/package.json is at ${manifest.version}, not ${version}`);
  console.log(`${manifest.name}: ${manifest.version}`);
}
const pinned = JSON.parse(fs.readFileSync(simulatorManifestPath, 'utf8')).dependencies['@idempotent-event-flow/operator'];
if (pinned !== version) throw new Error(`simulator/package.json depends on @idempotent-event-flow/operator ${pinned}, not ${version}`);
console.log(`CHANGELOG.md: [Unreleased] released as [${version}] - ${date}`);
console.log('next: npm run release:pack && npm run release:baseline, then commit, tag and publish the four tarballs');
