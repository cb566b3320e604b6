/**
 * The `/tmp` paths node:child_process passes to a program are the execution environment's (see
 * environment-tmp-paths.int.test.ts), as on AWS, where `/tmp` is the environment's only writable directory:
 * - in a shell command (exec, execSync, and spawn or execFile with `shell`), a `/tmp` path is the environment's also
 *   right after a shell operator (`>`, `>>`, `2>`, `<`, `|`, `;`, `&`, `&&`, `(`, `$(`, a backtick) and up to one
 *   (`cd /tmp;`, `cd /tmp&&`, `echo hi>/tmp/x`, `$(cat /tmp/x)`), so what the shell writes there the function reads
 *   back and the machine's `/tmp` gets nothing; a shell command's quoted text is the shell's too (it may be a script:
 *   `sh -c "cd /tmp; ..."`), so a `/tmp` word in it is the environment's;
 * - a plain argument (no shell) is the environment's path only when the whole argument is a `/tmp` path, or an
 *   option's value after its first `=` is (`--output=/tmp/x`): a text that mentions `/tmp` (a message, JSON) reaches
 *   the program as the function wrote it, as on AWS.
 */
import { describe, expect, test } from 'vitest';
import { tmpProbe } from './handler-kit';

const START = Date.parse('2026-11-29T00:00:00Z');
/** The names of this test's files under /tmp (the machine's must stay without them). */
const PREFIX = `ief-tmp-shell-${process.pid}`;
const P = `/tmp/${PREFIX}`;
const BACKTICK = '`';

/**
 * Shell commands, each meant to leave the file `/tmp/<PREFIX>-<name>` in the environment's /tmp. `put.sh FILE TEXT`
 * (written to the environment's /tmp by the handler) writes TEXT to FILE; `in.txt` holds "input".
 */
const SHELL_COMMANDS: Record<string, string> = {
  redirect: `echo redirect>${P}-redirect`,
  append: `echo append>>${P}-append`,
  stderr: `sh -c "echo stderr >&2" 2>${P}-stderr`,
  input: `cat<${P}-in.txt>${P}-input`,
  pipe: `echo unused|${P}-put.sh ${P}-pipe pipe`,
  semicolon: `true;${P}-put.sh ${P}-semicolon semicolon`,
  and: `true&&${P}-put.sh ${P}-and and`,
  background: `true&${P}-put.sh ${P}-background background`,
  subshell: `(${P}-put.sh ${P}-subshell subshell)`,
  cdSemicolon: `cd /tmp;echo cdSemicolon>${PREFIX}-cdSemicolon`,
  cdAnd: `cd /tmp&&echo cdAnd>${PREFIX}-cdAnd`,
  cdQuoted: `sh -c "cd /tmp; echo cdQuoted > ${PREFIX}-cdQuoted"`,
  cdSubstitution: `cd $(echo /tmp)&&echo cdSubstitution>${PREFIX}-cdSubstitution`,
  substitution: `echo $(cat ${P}-in.txt)>${P}-substitution`,
  substitutedProgram: `echo $(${P}-put.sh ${P}-substitutedProgram substitutedProgram)`,
  backtick: `echo ${BACKTICK}cat ${P}-in.txt${BACKTICK}>${P}-backtick`,
  backtickProgram: `echo ${BACKTICK}${P}-put.sh ${P}-backtickProgram backtickProgram${BACKTICK}`,
};

/** What each shell command leaves in its file. */
const SHELL_WRITES: Record<string, string> = {
  redirect: 'redirect\n',
  append: 'append\n',
  stderr: 'stderr\n',
  input: 'input',
  pipe: 'pipe',
  semicolon: 'semicolon',
  and: 'and',
  background: 'background',
  subshell: 'subshell',
  cdSemicolon: 'cdSemicolon\n',
  cdAnd: 'cdAnd\n',
  cdQuoted: 'cdQuoted\n',
  cdSubstitution: 'cdSubstitution\n',
  substitution: 'input\n',
  substitutedProgram: 'substitutedProgram',
  backtick: 'input\n',
  backtickProgram: 'backtickProgram',
};

/** Plain arguments of `/bin/echo` (no shell), and what the program gets: `TMPDIR` stands for the environment's directory. */
const ARGUMENTS: Array<[string, string]> = [
  [`${P}-whole`, `TMPDIR/${PREFIX}-whole`],
  ['/tmp', 'TMPDIR'],
  [`${P} with a space`, `TMPDIR/${PREFIX} with a space`],
  [`--output=${P}-option`, `--output=TMPDIR/${PREFIX}-option`],
  [`of=${P}-option`, `of=TMPDIR/${PREFIX}-option`],
  ['moved the cache to /tmp/cache', 'moved the cache to /tmp/cache'],
  ['{"path":"/tmp/x","note":"see /tmp"}', '{"path":"/tmp/x","note":"see /tmp"}'],
  ['see x=/tmp/y', 'see x=/tmp/y'],
  ['/tmp/x and /tmp/y', 'TMPDIR/x and /tmp/y'],
  ['https://example.com/tmp/y', 'https://example.com/tmp/y'],
  ['file:///tmp/y', 'file:///tmp/y'],
  ['-o/tmp/y', '-o/tmp/y'],
  ['/tmpfile', '/tmpfile'],
];

const HANDLER = `
const fs = require('node:fs');
const os = require('node:os');
const childProcess = require('node:child_process');
const P = ${JSON.stringify(P)};
const PIPED = { stdio: ['pipe', 'pipe', 'pipe'] };
const attempt = (run) => { try { return run(); } catch (error) { return 'error: ' + error.message.split('\\n')[0]; } };
const readBack = (file) => (fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : 'missing');
exports.handler = async (event) => {
  fs.writeFileSync(P + '-put.sh', '#!/bin/sh\\nprintf %s "$2" > "$1"\\n', { mode: 0o755 });
  fs.writeFileSync(P + '-in.txt', 'input');
  const seen = { tmpdir: os.tmpdir() };
  if (event.probe === 'shell') {
    seen.execSync = {};
    for (const [name, command] of Object.entries(event.commands)) {
      const ran = attempt(() => { childProcess.execSync(command, PIPED); return 'ran'; });
      seen.execSync[name] = ran === 'ran' ? readBack(P + '-' + name) : ran;
    }
    seen.exec = await new Promise((resolve) => {
      childProcess.exec('echo exec>' + P + '-exec', (error) => resolve(error ? 'error: ' + error.message : readBack(P + '-exec')));
    });
    seen.spawnShell = await new Promise((resolve) => {
      const child = childProcess.spawn('echo spawnShell>' + P + '-spawnShell', { shell: true });
      child.on('error', (error) => resolve('error: ' + error.message));
      child.on('close', () => resolve(readBack(P + '-spawnShell')));
    });
    seen.spawnSyncShellArguments = attempt(() => {
      childProcess.spawnSync('echo', ['spawnSyncShellArguments', '>' + P + '-spawnSyncShellArguments'], { shell: true, stdio: 'pipe' });
      return readBack(P + '-spawnSyncShellArguments');
    });
    seen.execFileSyncShell = attempt(() => {
      childProcess.execFileSync('cd', ['/tmp&&echo', 'execFileSyncShell>' + ${JSON.stringify(PREFIX)} + '-execFileSyncShell'], { shell: true, stdio: 'pipe' });
      return readBack(P + '-execFileSyncShell');
    });
    seen.quotedText = childProcess.execSync('echo "moved the cache to /tmp/cache"', PIPED).toString().trim();
    seen.url = childProcess.execSync('echo https://example.com/tmp/y', PIPED).toString().trim();
  }
  if (event.probe === 'arguments') {
    seen.echoed = event.arguments.map((argument) => childProcess.execFileSync('/bin/echo', [argument]).toString().replace(/\\n$/, ''));
    seen.written = attempt(() => {
      childProcess.execFileSync(P + '-put.sh', [P + '-written', 'the cache moved to /tmp/cache']);
      return readBack(P + '-written');
    });
  }
  return seen;
};
`;

const { invoke, machineFiles } = tmpProbe(PREFIX, HANDLER, 'tmp-shell', START);

describe("a child process's /tmp paths are the execution environment's", () => {
  test('in a shell command, also right after a shell operator and up to one', { timeout: 120_000 }, async () => {
    const seen = await invoke({ probe: 'shell', commands: SHELL_COMMANDS });
    expect(seen).toEqual({
      tmpdir: expect.stringContaining('ief-lambda-tmp-'),
      execSync: SHELL_WRITES,
      exec: 'exec\n',
      spawnShell: 'spawnShell\n',
      spawnSyncShellArguments: 'spawnSyncShellArguments\n',
      execFileSyncShell: 'execFileSyncShell\n',
      quotedText: `moved the cache to ${String(seen.tmpdir)}/cache`,
      url: 'https://example.com/tmp/y',
    });
    expect(machineFiles()).toEqual([]);
  });

  test('in a plain argument, only when the argument (or an option value after =) is a /tmp path', { timeout: 120_000 }, async () => {
    const seen = await invoke({ probe: 'arguments', arguments: ARGUMENTS.map(([argument]) => argument) });
    const tmpdir = String(seen.tmpdir);
    expect(seen).toEqual({
      tmpdir: expect.stringContaining('ief-lambda-tmp-'),
      echoed: ARGUMENTS.map(([, received]) => received.replace(/^TMPDIR|(?<==)TMPDIR/, tmpdir)),
      written: 'the cache moved to /tmp/cache',
    });
    expect(machineFiles()).toEqual([]);
  });
});
