/**
 * An execution environment's own `/tmp` (see environment-tmp.int.test.ts) is its own whatever the spelling of the path
 * and whoever opens it, as on AWS, where `/tmp` is the environment's only writable directory:
 * - every spelling that names `/tmp` (`//tmp/x`, `/./tmp/x`, `/tmp/../tmp/x`, a path relative to the working
 *   directory) reaches the environment's directory, and an absolute `/tmp` symlink target too;
 * - a module written to `/tmp` can be `require`d (a generated module), and a program written there can be run by
 *   node:child_process (a binary a layer unpacks, as @sparticuz/chromium or ffmpeg do), with `/tmp` as its working
 *   directory and `/tmp` paths as its arguments.
 * None of these files reaches the machine's `/tmp`.
 */
import { describe, expect, test } from 'vitest';
import { tmpProbe } from './handler-kit';

const START = Date.parse('2026-11-29T00:00:00Z');
/** The names of this test's files under /tmp (the machine's must stay without them). */
const PREFIX = `ief-tmp-paths-${process.pid}`;

const HANDLER = `
const fs = require('node:fs');
const path = require('node:path');
const childProcess = require('node:child_process');
const P = ${JSON.stringify(PREFIX)};
const attempt = (run) => { try { return run(); } catch (error) { return 'error: ' + error.message.split('\\n')[0]; } };
exports.handler = async (event) => {
  const seen = {};
  if (event.probe === 'spellings') {
    const spellings = {
      doubleSlash: '//tmp/' + P + '-double',
      dotSegment: '/./tmp/' + P + '-dot',
      dotDot: '/tmp/../tmp/' + P + '-dotdot',
      relative: path.relative(process.cwd(), '/tmp/' + P + '-relative'),
    };
    for (const [name, spelled] of Object.entries(spellings)) {
      seen[name] = attempt(() => {
        fs.writeFileSync(spelled, name);
        return fs.readFileSync('/tmp/' + path.basename(spelled), 'utf8');
      });
    }
    seen.symlink = attempt(() => {
      fs.symlinkSync('/tmp/' + P + '-target', '/tmp/' + P + '-link');
      fs.writeFileSync('/tmp/' + P + '-link', 'through the link');
      return fs.readFileSync('/tmp/' + P + '-target', 'utf8');
    });
    seen.listed = fs.readdirSync('/tmp').sort();
  }
  if (event.probe === 'load') {
    seen.required = attempt(() => {
      fs.writeFileSync('/tmp/' + P + '-helper.js', 'module.exports = 6;');
      fs.writeFileSync('/tmp/' + P + '-generated.js', "module.exports = { answer: require('./" + P + "-helper.js') * 7 };");
      return require('/tmp/' + P + '-generated.js').answer;
    });
    fs.writeFileSync('/tmp/' + P + '-input.txt', 'input in /tmp');
    fs.writeFileSync('/tmp/' + P + '-tool.sh', '#!/bin/sh\\ncat "$1" > "$2"\\necho ran in "$(pwd)"\\n', { mode: 0o755 });
    seen.execFileSync = attempt(() => childProcess.execFileSync('/tmp/' + P + '-tool.sh', ['/tmp/' + P + '-input.txt', '/tmp/' + P + '-output.txt'], { cwd: '/tmp' }).toString().trim());
    seen.output = attempt(() => fs.readFileSync('/tmp/' + P + '-output.txt', 'utf8'));
    seen.spawn = await new Promise((resolve) => {
      const child = childProcess.spawn('./' + P + '-tool.sh', [P + '-input.txt', P + '-spawned.txt'], { cwd: '/tmp' });
      let out = '';
      child.stdout.on('data', (chunk) => { out += chunk; });
      child.on('error', (error) => resolve('error: ' + error.message));
      child.on('close', () => resolve(out.trim()));
    });
    seen.spawned = attempt(() => fs.readFileSync('/tmp/' + P + '-spawned.txt', 'utf8'));
    seen.execSync = attempt(() => childProcess.execSync('cat /tmp/' + P + '-input.txt').toString());
    seen.tmpdir = require('node:os').tmpdir();
  }
  return seen;
};
`;

const { invoke, machineFiles } = tmpProbe(PREFIX, HANDLER, 'tmp-paths', START);

describe("an execution environment's /tmp, however it is reached", () => {
  test('every spelling of a /tmp path, and an absolute /tmp symlink target, is the environment\'s', { timeout: 120_000 }, async () => {
    const seen = await invoke({ probe: 'spellings' });
    expect(seen).toEqual({
      doubleSlash: 'doubleSlash',
      dotSegment: 'dotSegment',
      dotDot: 'dotDot',
      relative: 'relative',
      symlink: 'through the link',
      listed: ['double', 'dot', 'dotdot', 'relative', 'link', 'target'].map((name) => `${PREFIX}-${name}`).sort(),
    });
    expect(machineFiles()).toEqual([]);
  });

  test('a module written there can be required, and a program written there run with /tmp as its directory and its arguments', { timeout: 120_000 }, async () => {
    const seen = await invoke({ probe: 'load' });
    expect(seen).toEqual({
      required: 42,
      execFileSync: `ran in ${seen.tmpdir}`,
      output: 'input in /tmp',
      spawn: `ran in ${seen.tmpdir}`,
      spawned: 'input in /tmp',
      execSync: 'input in /tmp',
      tmpdir: expect.stringContaining('ief-lambda-tmp-'),
    });
    expect(machineFiles()).toEqual([]);
  });
});
