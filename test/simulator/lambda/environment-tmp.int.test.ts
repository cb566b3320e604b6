/**
 * Each execution environment has its own empty `/tmp`, as on AWS: `os.tmpdir()` (and `TMPDIR`) is a directory of the
 * environment's own, created when it starts and removed when it is disposed, and a handler's literal `/tmp` path
 * (node:fs and node:fs/promises) reaches that directory, not the machine's `/tmp`. A file another environment, another
 * run or another program left in the machine's `/tmp` is not seen, so two runs of one seed read the same files.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { VirtualClock } from '../../../simulator/aws/clock';
import { SeededScheduler } from '../../../simulator/schedule/seeded-scheduler';
import { assetDirectory, functionModel, runner } from './handler-kit';

const START = Date.parse('2026-11-29T00:00:00Z');
/** A file name under the machine's `/tmp` that a previous run (or another program) left there. */
const MARKER = `ief-environment-tmp-marker-${process.pid}.json`;
const LITERAL = `/tmp/${MARKER}`;

const HANDLER = `
const fs = require('node:fs');
const fsp = require('node:fs/promises');
const os = require('node:os');
const path = require('node:path');
exports.handler = async (event) => {
  const literal = ${JSON.stringify(LITERAL)};
  const ofTmpdir = path.join(os.tmpdir(), ${JSON.stringify(MARKER)});
  const seen = {
    tmpdir: os.tmpdir(),
    tmpdirVariable: process.env.TMPDIR,
    literalExisted: fs.existsSync(literal),
    ofTmpdirExisted: fs.existsSync(ofTmpdir),
    promisesExisted: await fsp.access(literal).then(() => true, () => false),
    listed: fs.readdirSync('/tmp').sort(),
  };
  fs.writeFileSync(literal, JSON.stringify({ wroteBy: event.name }));
  await fsp.writeFile(ofTmpdir + '.promises', 'x');
  seen.readBack = JSON.parse(fs.readFileSync(literal, 'utf8')).wroteBy;
  seen.listedAfter = (await fsp.readdir('/tmp')).sort();
  if (event.die) process.exit(1);
  return seen;
};
`;

const asset = assetDirectory({ 'index.js': HANDLER });
afterAll(() => {
  asset.remove();
  fs.rmSync(LITERAL, { force: true });
});

type Seen = {
  tmpdir: string;
  tmpdirVariable: string;
  literalExisted: boolean;
  ofTmpdirExisted: boolean;
  promisesExisted: boolean;
  listed: string[];
  readBack: string;
  listedAfter: string[];
};

async function invoke(run: ReturnType<typeof runner>, event: object, key: string): Promise<Seen> {
  const outcome = await run.invoke(event, key);
  if (outcome.kind !== 'returned') throw new Error(`the invocation ${outcome.kind}: ${JSON.stringify(outcome)}`);
  return outcome.response as Seen;
}

describe("an execution environment's /tmp", () => {
  test('starts empty and its own in each run of a seed, whatever the machine\'s /tmp holds; the machine\'s file is untouched', { timeout: 120_000 }, async () => {
    fs.writeFileSync(LITERAL, JSON.stringify({ wroteBy: 'a previous run' }));
    const runs: Seen[] = [];
    for (const name of ['first run', 'second run']) {
      const run = runner(functionModel(asset.directory, { timeoutSeconds: 30 }), { scheduler: new SeededScheduler('tmp'), clock: VirtualClock.frozen(START) });
      try {
        runs.push(await invoke(run, { name }, 'tmp'));
      } finally {
        await run.stop();
      }
    }
    for (const seen of runs) {
      expect(seen.literalExisted).toBe(false);
      expect(seen.ofTmpdirExisted).toBe(false);
      expect(seen.promisesExisted).toBe(false);
      expect(seen.listed).toEqual([]);
      expect(seen.listedAfter).toEqual([MARKER, `${MARKER}.promises`]);
      expect(seen.tmpdir).not.toBe('/tmp');
      expect(seen.tmpdirVariable).toBe(seen.tmpdir);
      // removed with its environment
      expect(fs.existsSync(seen.tmpdir)).toBe(false);
    }
    expect(runs[0].readBack).toBe('first run');
    expect(runs[1].readBack).toBe('second run');
    expect(runs[0].tmpdir).not.toBe(runs[1].tmpdir);
    expect(JSON.parse(fs.readFileSync(LITERAL, 'utf8'))).toEqual({ wroteBy: 'a previous run' });
  });

  test('is kept while the environment stays warm, and a new environment (after the runtime died) starts with an empty one', { timeout: 120_000 }, async () => {
    fs.rmSync(LITERAL, { force: true });
    const run = runner(functionModel(asset.directory, { timeoutSeconds: 30 }));
    try {
      const first = await invoke(run, { name: 'warm' }, 'a');
      const warm = await invoke(run, { name: 'warm again' }, 'b');
      expect(first.literalExisted).toBe(false);
      expect(warm.literalExisted).toBe(true);
      expect(warm.tmpdir).toBe(first.tmpdir);
      const dying = await run.invoke({ name: 'dies', die: true }, 'c');
      expect(dying).toMatchObject({ kind: 'threw', errorName: 'Runtime.ExitError' });
      const fresh = await invoke(run, { name: 'fresh' }, 'd');
      expect(fresh.literalExisted).toBe(false);
      expect(fresh.listed).toEqual([]);
      expect(fresh.tmpdir).not.toBe(first.tmpdir);
      expect(fs.existsSync(first.tmpdir)).toBe(false);
    } finally {
      await run.stop();
    }
    expect(fs.existsSync(LITERAL)).toBe(false);
  });

  test('of an environment that ended just before the run stopped is removed by the time the run has stopped', { timeout: 120_000 }, async () => {
    const run = runner(functionModel(asset.directory, { timeoutSeconds: 30 }));
    let tmpdir = '';
    try {
      tmpdir = (await invoke(run, { name: 'first' }, 'a')).tmpdir;
      expect(fs.existsSync(tmpdir)).toBe(true);
      // its runtime exits: the environment ends, and the run stops at once
      expect(await run.invoke({ name: 'dies', die: true }, 'b')).toMatchObject({ kind: 'threw', errorName: 'Runtime.ExitError' });
    } finally {
      await run.stop();
    }
    expect(fs.existsSync(tmpdir)).toBe(false);
  });

  test('leaves the app where it is when it is itself under /tmp: the directories on the way to its code are the real ones', { timeout: 120_000 }, async () => {
    // a project (or a test's asset) under the machine's /tmp: the module loader and the handler read its directories
    const nested = fs.mkdtempSync(path.join(os.tmpdir(), 'ief-project-under-tmp-'));
    const taskRoot = path.join(nested, 'cdk.out', 'asset.code');
    fs.mkdirSync(taskRoot, { recursive: true });
    fs.writeFileSync(path.join(taskRoot, 'index.js'), "const fs = require('node:fs'); const path = require('node:path');\n" +
      'exports.handler = async () => ({ parent: fs.lstatSync(path.dirname(__dirname)).isDirectory(), project: fs.statSync(path.dirname(path.dirname(__dirname))).isDirectory(), real: fs.realpathSync(__filename) });\n');
    const run = runner(functionModel(taskRoot, { timeoutSeconds: 30 }));
    try {
      const outcome = await run.invoke({}, 'under-tmp');
      expect(outcome).toMatchObject({ kind: 'returned', response: { parent: true, project: true, real: fs.realpathSync(path.join(taskRoot, 'index.js')) } });
    } finally {
      await run.stop();
      fs.rmSync(nested, { recursive: true, force: true });
    }
  });
});
