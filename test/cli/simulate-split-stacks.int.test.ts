/**
 * `simulate` on an app as users write it (test/simulator/fixtures/split-stacks): the parts composed by hand, a
 * subscriber in another stack than the outbox and topic it reads (references across stacks, in resources and in the
 * consumer's environment), and beside the flow what the simulator cannot run. One synthesis is shared by the runs.
 */
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { beforeAll, describe, expect, inject, test } from 'vitest';
import { EXIT_CODE, main } from '../../simulator/cli/main';
import { outOfScopeNote, unknownProbesMessage } from '../../simulator/cli/simulate-command';
import { synthesize } from '../../simulator/model/synthesize';

const PROJECT = path.resolve(__dirname, '../..');
const FIXTURE = 'test/simulator/fixtures/split-stacks';

let assembly: string;
let events: string;

async function cli(...argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await main(argv, { stdout: (text) => void (stdout += text), stderr: (text) => void (stderr += text), cwd: PROJECT });
  return { code, stdout, stderr };
}

beforeAll(async () => {
  const directory = mkdtempSync(path.join(tmpdir(), 'ief-split-'));
  assembly = await synthesize({ cwd: PROJECT, app: `npx tsx ${FIXTURE}/app.ts`, outputDirectory: path.join(directory, 'cdk.out') });
  events = path.join(directory, 'events.json');
  writeFileSync(events, JSON.stringify(Array.from({ length: 6 }, (_, index) => ({ type: 'com.example.Audited', subject: `s${index}`, data: { index } }))));
});

describe('simulate: an app of hand-composed parts over two stacks', () => {
  test('runs the subscriber of the other stack, resolves its environment there, and lists what it cannot run', async () => {
    const { code, stdout } = await cli(
      'simulate', '--assembly', assembly, '--scenario', `${FIXTURE}/scenario.ts`, '--events', events,
      '--duplicate-rate', '0.3', '--lost-response-rate', '0', '--throttle-rate', '0', '--crash-rate', '0',
      '--concurrency', '2', '--quiet', '--endpoint', inject('dynamoDbEndpoint'),
    );

    expect(code, stdout).toBe(EXIT_CODE.OK);
    // six events, each audited exactly once (or at most once if dead-lettered), counted in Core's table
    expect(stdout).toMatch(/^Audit\s+transactional\s+6\s+\d+\s+\d+\s+\d+\s+\d+\s+\d+\s+\d \([56](-6)?\)$/m);
    expect(stdout).toContain('OK: every event reached every matching subscriber; each effect applied exactly once');
    // the queue nobody consumes is not a subscriber that fails to drain, and the inline function is not run
    expect(stdout).toMatch(/not simulated:\n[\s\S]*AWS::Lambda::Function Service\/InlineHousekeeping\w+ \(Service\/InlineHousekeeping\/Resource\): its code is inline/);
    expect(stdout).toMatch(/AWS::SNS::Subscription Service\/Analytics\w+ \(Service\/Analytics\/Resource\): its queue Service\/AnalyticsQueue\w+ has no consumer the simulator runs/);
    expect(stdout).not.toContain('not-drained');
  });

  test("appends --events with the limit the constructs give producers: an event too large for a full relay batch is refused (issue 30)", async () => {
    // the hand-composed relay: batches of 10 to a 262,144-byte topic, so events of at most 26,214 bytes
    const large = path.join(mkdtempSync(path.join(tmpdir(), 'ief-large-')), 'events.json');
    writeFileSync(large, JSON.stringify([{ type: 'com.example.Audited', subject: 'large', data: { padding: 'x'.repeat(30_000) } }]));
    const { code, stdout, stderr } = await cli('simulate', '--assembly', assembly, '--events', large, '--no-faults', '--quiet', '--endpoint', inject('dynamoDbEndpoint'));
    expect(stdout + stderr, stdout + stderr).toMatch(/is too large: .* but the flow's event size limit \(maxEventSize: .*\) is 26,214 bytes/);
    expect(code).not.toBe(EXIT_CODE.OK);
  });

  test('says which stack to add when the selected one refers to another', async () => {
    const { code, stderr } = await cli('simulate', '--assembly', assembly, '--events', events, '--stack', 'Service', '--quiet', '--endpoint', inject('dynamoDbEndpoint'));
    expect(code).toBe(EXIT_CODE.FAILURE);
    expect(stderr).toMatch(/TopicArn \{"Fn::GetStackOutput":\{"StackName":"Core".*\} is in stack Core, which is not selected \(add --stack Core\)/);
  });

  test('refuses a scenario with an effect probe for no subscriber of the whole app (a typo would leave effects unchecked): a usage error once the flow is built, before any function runs, no verdict printed', async () => {
    const directory = mkdtempSync(path.join(tmpdir(), 'ief-scenario-'));
    const scenario = path.join(directory, 'scenario.js');
    const log = path.join(directory, 'functions.log');
    writeFileSync(scenario, 'module.exports = { scenario: { effects: { Audti: async () => [] } } };\n');
    const { code, stdout, stderr } = await cli(
      'simulate', '--assembly', assembly, '--scenario', scenario, '--events', events, '--no-faults', '--quiet', '--endpoint', inject('dynamoDbEndpoint'),
      '--log', log, '--json', path.join(directory, 'result.json'),
    );
    expect(stderr).toContain(`error: ${unknownProbesMessage(scenario, ['Audti'], ['Audit'])}`);
    expect(stdout).not.toMatch(/^OK:/m);
    expect(code).toBe(EXIT_CODE.USAGE);
    // no function was initialized or invoked: the log of every function's output is there, and empty
    expect(readFileSync(log, 'utf8')).toBe('');
    expect(existsSync(path.join(directory, 'result.json'))).toBe(false);
  });

  test('--stack: a probe for a subscriber the selected stacks do not have is out of the run\'s scope, noted, the verdict (OK) unchanged', async () => {
    const scenario = path.join(mkdtempSync(path.join(tmpdir(), 'ief-scenario-')), 'scenario.js');
    writeFileSync(scenario, 'module.exports = { scenario: { effects: { Elsewhere: async () => [] } } };\n');
    const { code, stdout, stderr } = await cli(
      'simulate', '--assembly', assembly, '--scenario', scenario, '--events', events, '--stack', 'Core', '--stack', 'Service', '--no-faults', '--quiet', '--endpoint', inject('dynamoDbEndpoint'),
    );
    expect(stdout).toContain(outOfScopeNote(['Elsewhere'], ['Core', 'Service']));
    expect(stdout).toMatch(/^OK:/m);
    expect(stderr).not.toContain('error:');
    expect(code).toBe(EXIT_CODE.OK);
  });
});
