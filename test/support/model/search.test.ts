/**
 * A model search's failure replays from the line it prints (issue 38: the ordered model's seeds 13013 and 20020 did not
 * reproduce from their seed and path). A shrunk `fc.commands` counterexample needs the commands' replay path besides
 * fast-check's seed and path: the path walk shrinks values that never ran, and `fc.commands` drops a command that
 * never ran, so without it the walk reaches another value. Pure fast-check, no DynamoDB.
 */
import fc from 'fast-check';
import { expect, test } from 'vitest';
import { commandsReplayPath, failureReport, searchFromEnvironment } from './search';

interface Counter {
  value: number;
}

/** +1 always. */
class Up implements fc.Command<Counter, Counter> {
  public check = (): boolean => true;
  public run(model: Counter, real: Counter): void {
    model.value += 1;
    real.value += 1;
  }
  public toString = (): string => 'up';
}

/** -1, only above 0 (a command that does not run where its precondition fails: what the replay path records). */
class Down implements fc.Command<Counter, Counter> {
  public check = (model: Readonly<Counter>): boolean => model.value > 0;
  public run(model: Counter, real: Counter): void {
    model.value -= 1;
    real.value -= 1;
  }
  public toString = (): string => 'down';
}

/** The defect: fails once the counter reached 3 (only there does it run). */
class Boom implements fc.Command<Counter, Counter> {
  public check = (model: Readonly<Counter>): boolean => model.value >= 3;
  public run(): void {
    throw new Error('boom at 3');
  }
  public toString = (): string => 'boom';
}

function property(replayPath?: string): fc.IAsyncProperty<[Iterable<fc.Command<Counter, Counter>>]> {
  const commands = fc.commands([fc.constant(new Up()), fc.constant(new Down()), fc.constant(new Down()), fc.constant(new Boom())], { maxCommands: 30, ...(replayPath === undefined ? {} : { replayPath }) });
  return fc.asyncProperty(commands, async (run) => {
    fc.modelRun(() => ({ model: { value: 0 }, real: { value: 0 } }), run);
    await Promise.resolve();
  });
}

/** The counterexample a report names, without its replay-path comment. */
function counterexample(report: string): string {
  return (/Counterexample: (.*)/.exec(report)?.[1] ?? '').replace(/\/\*replayPath="[^"]*"\*\//, '').trim();
}

test('a failing search names the seed, path and commands replay path that replay its counterexample, once', async () => {
  const report = await failureReport(property(), { runs: 200, seed: 20020 });
  expect(report).toBeDefined();
  const [first] = report!.split('\n');
  const printed = /IEF_MODEL_SEED=(\d+) IEF_MODEL_PATH=(\S+) IEF_MODEL_REPLAY_PATH='([^']*)'/.exec(first!);
  expect(printed).not.toBeNull();
  const [, seed, path, replayPath] = printed!;
  // the last line says it again (CI prints only the tail of a long failure)
  expect(report!.split('\n').at(-1)).toBe(first);

  const search = searchFromEnvironment(200, { IEF_MODEL_SEED: seed, IEF_MODEL_PATH: path, IEF_MODEL_REPLAY_PATH: replayPath });
  expect(search).toEqual({ runs: 1, seed: Number(seed), path, replayPath });
  const replayed = await failureReport(property(search.replayPath), search);
  expect(replayed).toBeDefined();
  expect(counterexample(replayed!)).toBe(counterexample(report!));
  expect(counterexample(report!)).toMatch(/boom/);
});

test('without the commands replay path the same seed and path reach another value (why the replay path is printed)', async () => {
  const report = await failureReport(property(), { runs: 200, seed: 20020 });
  const [, seed, path] = /IEF_MODEL_SEED=(\d+) IEF_MODEL_PATH=(\S+)/.exec(report!.split('\n')[0]!)!;
  const replayed = await failureReport(property(), { runs: 1, seed: Number(seed), path }).catch((error: Error) => `threw: ${error.message}`);
  expect(replayed === undefined || counterexample(replayed) !== counterexample(report!)).toBe(true);
});

test('the commands replay path is read from a counterexample; none from one without commands', () => {
  expect(commandsReplayPath([1, { toString: () => '[up,boom] /*replayPath="/N:D"*/' }])).toBe('/N:D');
  const commands = fc.sample(fc.commands([fc.constant(new Up())], { maxCommands: 3 }), { numRuns: 1, seed: 1 })[0]!;
  expect(commandsReplayPath([0, commands])).toBe(':');
  expect(commandsReplayPath([0, 1])).toBeUndefined();
});

test('a search from the environment: runs unless a seed and path name one failure', () => {
  expect(searchFromEnvironment(10, {})).toEqual({ runs: 10 });
  expect(searchFromEnvironment(10, { IEF_MODEL_SEED: '7' })).toEqual({ runs: 10, seed: 7 });
  // a path or replay path without a seed replays nothing: the search runs as it would
  expect(searchFromEnvironment(10, { IEF_MODEL_PATH: '3:0', IEF_MODEL_REPLAY_PATH: 'A' })).toEqual({ runs: 10 });
  expect(searchFromEnvironment(40, { IEF_MODEL_SEED: '7', IEF_MODEL_PATH: '3:0' })).toEqual({ runs: 1, seed: 7, path: '3:0' });
});
