/**
 * Environments initialized ahead of need (FunctionRunner's `preInitialize`), as Lambda occasionally does for on-demand
 * functions: after an environment ends, a spare starts its init in the background, and so does the function's first
 * environment when the run calls `initializeAhead`; the next invocation that needs a new environment takes it. What the function can see must be what an init on demand gives:
 * its init output reaches the invocation that took it, in order, and its init reads the time it began at.
 */
import { readdirSync } from 'node:fs';
import { afterAll, describe, expect, test } from 'vitest';
import { VirtualClock } from '../../../simulator/aws/clock';
import { assetDirectory, functionModel, runner } from './handler-kit';

/**
 * Logs twice at init and remembers when its init ran, after 300 ms of work (real time: the test moves the simulation's
 * clock meanwhile); `die` ends the runtime during the invocation.
 */
const HANDLER = `
console.log('init line 1');
const busyUntil = performance.now() + 300;
while (performance.now() < busyUntil);
const initAt = Date.now();
console.log('init line 2');
exports.handler = async (event) => {
  if (event.die) process.exit(1);
  return { initAt, now: Date.now() };
};
`;

const assets: { remove(): void }[] = [];
afterAll(() => {
  for (const asset of assets) asset.remove();
});

/** A runner of HANDLER that keeps a spare, on a frozen clock, and the lines its observer heard. */
function preInitializingRunner(): { clock: VirtualClock; observed: string[]; run: ReturnType<typeof runner> } {
  const asset = assetDirectory({ 'index.js': HANDLER });
  assets.push(asset);
  const clock = VirtualClock.frozen(Date.parse('2026-03-01T00:00:00.000Z'));
  const observed: string[] = [];
  const run = runner(functionModel(asset.directory), { clock, preInitialize: true, observer: { onFunctionOutput: (_key, line) => void observed.push(line) } });
  return { clock, observed, run };
}

describe('pre-initialized environments', () => {
  test('the environment that replaces one that ended was initialized ahead, at the time it began, and its init output reaches the invocation that takes it', async () => {
    const { clock, observed, run } = preInitializingRunner();
    try {
      const firstLines: string[] = [];
      expect(await run.invoke({}, 'first', (line) => void firstLines.push(line))).toMatchObject({ kind: 'returned' });
      expect(firstLines, 'the first invocation hears its init').toEqual(['init line 1', 'init line 2']);
      // the runtime dies during the next invocation: its replacement begins its init at once, and the simulation's time
      // moves while it works
      expect(await run.invoke({ die: true }, 'dies')).toMatchObject({ kind: 'threw', errorName: 'Runtime.ExitError' });
      const replacementBegan = clock.now();
      clock.advanceBy(60_000);

      const secondLines: string[] = [];
      const second = await run.invoke({}, 'second', (line) => void secondLines.push(line));
      expect(run.stats()).toMatchObject({ coldStarts: 2, preInitialized: 1 });
      // its init ran ahead, reading the time it began at, not the time the clock had moved to meanwhile
      expect(second).toMatchObject({ kind: 'returned', response: { initAt: replacementBegan, now: replacementBegan + 60_000 } });
      expect(secondLines, 'the invocation that took the spare hears its init').toEqual(['init line 1', 'init line 2']);
      // the observer heard each init once, in order
      expect(observed.filter((line) => line.startsWith('init line'))).toEqual(['init line 1', 'init line 2', 'init line 1', 'init line 2']);
    } finally {
      await run.stop();
    }
  });

  test("initializeAhead: the function's first environment initializes before its first invocation, at the time it began, and its init output waits for that invocation", async () => {
    const { clock, observed, run } = preInitializingRunner();
    try {
      const began = clock.now();
      run.initializeAhead();
      // a second call while the first environment initializes starts no second one
      run.initializeAhead();
      // the init (300 ms of work) runs meanwhile; nothing of it is heard before an invocation takes the environment
      await new Promise((resolve) => setTimeout(resolve, 600));
      expect(observed).toEqual([]);
      clock.advanceBy(5_000);
      const lines: string[] = [];
      const first = await run.invoke({}, 'first', (line) => void lines.push(line));
      expect(first).toMatchObject({ kind: 'returned', response: { initAt: began, now: began + 5_000 } });
      expect(run.stats()).toMatchObject({ coldStarts: 1, preInitialized: 1 });
      expect(lines).toEqual(['init line 1', 'init line 2']);
      expect(observed).toEqual(['init line 1', 'init line 2']);
    } finally {
      await run.stop();
    }
  });

  test('initializeAhead does nothing without preInitialize: the first invocation initializes on demand', async () => {
    const asset = assetDirectory({ 'index.js': HANDLER });
    assets.push(asset);
    const clock = VirtualClock.frozen(Date.parse('2026-03-01T00:00:00.000Z'));
    const run = runner(functionModel(asset.directory), { clock });
    try {
      run.initializeAhead();
      clock.advanceBy(5_000);
      expect(await run.invoke({}, 'first')).toMatchObject({ kind: 'returned', response: { initAt: clock.now() } });
      expect(run.stats()).toMatchObject({ coldStarts: 1, preInitialized: 0 });
    } finally {
      await run.stop();
    }
  });

  test('a spare whose init failed gives the invocation that takes it the init error, as an init on demand would', async () => {
    const asset = assetDirectory({ 'index.js': "throw new Error('the config could not be read');\n" });
    assets.push(asset);
    const run = runner(functionModel(asset.directory), { preInitialize: true });
    try {
      const failure = { kind: 'threw', errorName: 'Error', errorMessage: 'the config could not be read', atInit: true };
      // on demand, then the spare that began with it
      expect(await run.invoke({}, 'first')).toMatchObject(failure);
      expect(await run.invoke({}, 'second')).toMatchObject(failure);
      expect(run.stats()).toMatchObject({ coldStarts: 2, preInitialized: 1 });
    } finally {
      await run.stop();
    }
  });

  test('a spare whose runtime died while it waited is not given an invocation: one starts on demand instead', async () => {
    // an environment not invoked within 300 ms of its init dies (an uncaught exception while idle), leaving a mark
    // (a file named by its pid) first; `die` ends the runtime during the invocation
    const asset = assetDirectory({
      'index.js':
        "const fs = require('fs'), path = require('path');\nlet invoked = false;\n" +
        "setTimeout(() => { if (!invoked) { fs.writeFileSync(path.join(__dirname, 'died-' + process.pid), ''); throw new Error('died idle'); } }, 300);\n" +
        "exports.handler = async (event) => { invoked = true; if (event.die) process.exit(1); return 'ok'; };\n",
    });
    assets.push(asset);
    const run = runner(functionModel(asset.directory), { preInitialize: true });
    try {
      expect(await run.invoke({}, 'first')).toMatchObject({ kind: 'returned', response: 'ok' });
      // the runtime dies: its replacement begins its init, and then dies idle. Waited for by its mark, not by a fixed
      // time: on a loaded machine the spare's init alone can take longer than any fixed wait (seen: 700 ms was short)
      expect(await run.invoke({ die: true }, 'dies')).toMatchObject({ kind: 'threw', errorName: 'Runtime.ExitError' });
      const diedIdle = () => readdirSync(asset.directory).some((name) => name.startsWith('died-'));
      for (let waited = 0; !diedIdle(); waited += 50) {
        if (waited > 30_000) throw new Error('the spare did not die idle within 30 s');
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      // its exit reaches the runner just after the mark
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(await run.invoke({}, 'second')).toMatchObject({ kind: 'returned', response: 'ok' });
      expect(run.stats()).toMatchObject({ coldStarts: 2, preInitialized: 0 });
    } finally {
      await run.stop();
    }
  });

  test('without preInitialize, every new environment starts on demand', async () => {
    const asset = assetDirectory({ 'index.js': HANDLER });
    assets.push(asset);
    const run = runner(functionModel(asset.directory), { maxEnvironments: 2 });
    try {
      await Promise.all([run.invoke({}, 'a'), run.invoke({}, 'b')]);
      expect(run.stats()).toMatchObject({ coldStarts: 2, preInitialized: 0 });
    } finally {
      await run.stop();
    }
  });
});
