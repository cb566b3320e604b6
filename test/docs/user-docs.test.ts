/**
 * The docs a user reads from the package (README.md and docs/*.md, issue 22 items 11 to 13): their order, their links
 * (to files the package ships, and headings that exist), and the facts they state about the code.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as iam from 'aws-cdk-lib/aws-iam';
import { describe, expect, test, vi } from 'vitest';
import { ENVELOPE_ATTRIBUTE_NAMES } from '../../lambda/contract/envelope-attributes';
import { OUTBOX_ITEM } from '../../lambda/contract/wire-format';
import { InboxTable } from '../../lib/consumer';
import { START_HANG_LIMIT_MS } from '../../simulator/aws/dynamodb-local';
import type { ViolationKind } from '../../simulator/check/invariants';
import { RUN_CHECKS } from '../../simulator/check/registry';
import { CAUSE_KINDS } from '../../simulator/check/violation-cause';
import { DEFAULT_FAULT_RATES } from '../../simulator/run/options';
import { loadScenario } from '../../simulator/run/scenario';

const REPO = path.resolve(__dirname, '..', '..');
const README = fs.readFileSync(path.join(REPO, 'README.md'), 'utf8');
const API = fs.readFileSync(path.join(REPO, 'docs', 'API.md'), 'utf8');
const SIMULATOR = fs.readFileSync(path.join(REPO, 'docs', 'SIMULATOR.md'), 'utf8');
const TESTING = fs.readFileSync(path.join(REPO, 'docs', 'TESTING.md'), 'utf8');
const RESOURCES = fs.readFileSync(path.join(REPO, 'docs', 'RESOURCES.md'), 'utf8');
const CROSS_ACCOUNT = fs.readFileSync(path.join(REPO, 'docs', 'CROSS-ACCOUNT.md'), 'utf8');

/** The user docs: README.md and the hand-written docs/*.md (the generated reference has its own test). */
const USER_DOCS = ['README.md', ...fs.readdirSync(path.join(REPO, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];

/** The `## ` headings of a markdown text, in order (code blocks skipped). */
function headings(markdown: string, level = 2): string[] {
  const prefix = `${'#'.repeat(level)} `;
  return withoutCode(markdown)
    .split('\n')
    .filter((line) => line.startsWith(prefix))
    .map((line) => line.slice(prefix.length).trim());
}

function withoutCode(markdown: string): string {
  return markdown.replace(/^```[\s\S]*?^```/gm, '');
}

/** The text of the `## <title>` section, up to the next `## `. */
function section(markdown: string, title: string): string {
  const start = markdown.indexOf(`\n## ${title}\n`);
  if (start < 0) throw new Error(`no section '## ${title}'`);
  const next = markdown.indexOf('\n## ', start + 1);
  return markdown.slice(start, next < 0 ? undefined : next);
}

/** GitHub's anchor of a heading. */
function slug(heading: string): string {
  return heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** Whether the package's `files` field ships `file` (its patterns: directories, `**`/`*` globs, `!` exclusions). */
function shipped(file: string): boolean {
  const patterns = (JSON.parse(fs.readFileSync(path.join(REPO, 'package.json'), 'utf8')) as { files: string[] }).files;
  const toRegExp = (glob: string): RegExp =>
    new RegExp(
      `^${glob
        .replace(/[.+^${}()|[\]\\]/g, '\\$&')
        .replace(/\*\*\//g, '\0')
        .replace(/\*/g, '[^/]*')
        .replace(/\0/g, '(?:.*/)?')}(?:/.*)?$`,
    );
  let included = false;
  for (const pattern of patterns) {
    if (pattern.startsWith('!')) {
      if (toRegExp(pattern.slice(1)).test(file)) included = false;
    } else if (toRegExp(pattern).test(file)) {
      included = true;
    }
  }
  return included;
}

describe('README', () => {
  test('leads with what it is, then Install and Quick start', () => {
    expect(headings(README).slice(0, 2)).toEqual(['Install', 'Quick start']);
    const intro = README.slice(0, README.indexOf('\n## '));
    expect(intro).toMatch(/AWS CDK constructs/);
  });

  test("keeps the repository's own commands in 'Developing this library', the two a fresh clone needs included", () => {
    const developing = section(README, 'Developing this library');
    expect(developing).toContain('`npm ci && npm run demo`');
    expect(developing).toContain('`npm ci && npm test`');
    const beforeIt = README.slice(0, README.indexOf('\n## Developing this library\n'));
    expect(beforeIt).not.toMatch(/npm ci\b/);
  });

  test('is short, and points to a docs page for each task a newcomer has (issue 44)', () => {
    expect(Buffer.byteLength(README)).toBeLessThan(20_000);
    const tasks = section(README, 'Documentation, by task');
    for (const page of ['PROCESSING-MODES', 'ORDERED-DELIVERY', 'CROSS-ACCOUNT', 'LARGE-EVENTS', 'TESTING', 'SIMULATOR', 'DEPLOYING', 'OPERATING', 'RESOURCES', 'GUARANTEES', 'API', 'OTHER-LANGUAGES']) {
      expect(tasks).toContain(`](docs/${page}.md)`);
    }
  });

  test('says nothing the ordered path made untrue (issue 44: "No ordering" beside an ordered path)', () => {
    for (const doc of USER_DOCS) {
      const text = fs.readFileSync(path.join(REPO, doc), 'utf8');
      expect(text, doc).not.toMatch(/\*No ordering\.\*/);
      expect(text, doc).not.toMatch(/standard path only/);
    }
  });
});

describe('docs/TESTING.md', () => {
  test("Template assertions, snapshots with bundling skipped, simulate in CI", () => {
    const testing = TESTING;
    expect(testing).toContain('Template.fromStack');
    expect(testing).toContain("'aws:cdk:bundling-stacks': []");
    expect(testing).toContain('toMatchSnapshot');
    expect(testing).toMatch(/npx idempotent-event-flow simulate --scenario/);
  });
});

describe('links in the shipped docs', () => {
  const links = USER_DOCS.flatMap((doc) =>
    [...withoutCode(fs.readFileSync(path.join(REPO, doc), 'utf8')).matchAll(/\]\(([^)\s]+)\)/g)]
      .map((match) => match[1]!)
      .filter((target) => !/^[a-z]+:/.test(target))
      .map((target) => ({ doc, target })),
  );

  test('there are links to check', () => {
    expect(links.length).toBeGreaterThan(20);
  });

  test('point to files the package ships, and to headings that exist', () => {
    const broken: string[] = [];
    for (const { doc, target } of links) {
      const [file, anchor] = target.split('#') as [string, string | undefined];
      const resolved = file === '' ? doc : path.posix.normalize(path.posix.join(path.posix.dirname(doc), file));
      if (!fs.existsSync(path.join(REPO, resolved))) {
        broken.push(`${doc}: ${target} (no such file)`);
        continue;
      }
      if (!shipped(resolved)) broken.push(`${doc}: ${target} (not in the package)`);
      if (anchor !== undefined && resolved.endsWith('.md')) {
        const text = fs.readFileSync(path.join(REPO, resolved), 'utf8');
        const anchors = [2, 3, 4].flatMap((level) => headings(text, level)).map(slug);
        if (!anchors.includes(anchor)) broken.push(`${doc}: ${target} (no heading #${anchor})`);
      }
    }
    expect(broken).toEqual([]);
  });
});

describe('docs/SIMULATOR.md, issue 29', () => {
  test("says what OK guarantees and what it does not: dead letters, failure paths met, the verdicts that fail a run", () => {
    const ok = section(SIMULATOR, 'What `OK` guarantees, and what it does not');
    const [guarantees, limits] = ok.split('`OK` does **not** mean:');
    expect(limits, 'a list of what OK does not mean').toBeDefined();
    for (const named of ['`unapplied-event`', '`not-exercised`', '`failurePaths`', 'seed']) expect(guarantees).toContain(named);
    for (const named of ['another seed', 'no probe', 'never met']) expect(limits).toContain(named);
  });

  test("says how the IAM report tells the library's grants from the user's: the statements' Sid", () => {
    const iamSection = section(SIMULATOR, 'IAM evaluation');
    expect(iamSection).toContain('IdempotentEventFlow<origin>[n]');
    expect(iamSection).toContain("granted by idempotent-event-flow's grantAppendEvents");
    expect(iamSection).toContain('`granted by you`');
  });
});

/**
 * Every violation kind a run can report, once: the compiler refuses this object when a kind is missing or unknown
 * (a `Record` over the union), so a new kind cannot be left out of the page's table unnoticed. `not-exercised` is
 * deprecated (kept in the type for 1.0.0's users; no run reports it: the run is NOT PROVEN instead), so it has no row.
 */
const VIOLATION_KINDS: Record<Exclude<ViolationKind, 'not-exercised'>, true> = {
  'not-relayed': true,
  untracked: true,
  lost: true,
  'not-drained': true,
  'not-settled': true,
  'unexplained-dead-letter': true,
  'effect-count': true,
  'probe-failed': true,
  'access-denied': true,
  'producer-failed': true,
  'nothing-acknowledged': true,
  'configuration-error': true,
  'acknowledged-failure': true,
  'dual-write': true,
  'command-committed-twice': true,
  'follow-up-committed-twice': true,
  'unwatched-dead-letters': true,
  'nothing-reached': true,
  'valid-event-rejected': true,
  'unapplied-event': true,
  'repeated-send': true,
  'deploy-refused': true,
  'unconfirmed-subscription': true,
  'undeliverable-subscription': true,
  'synth-error': true,
  history: true,
  'aggregate-order': true,
  'subject-spread': true,
  'untaken-event': true,
  'lease-outlasts-redelivery': true,
};

describe('docs/SIMULATOR.md, "Causes, as fields"', () => {
  test('has one row per kind of cause, and none for a kind that does not exist', () => {
    const causes = section(SIMULATOR, 'The invariants').split('\n### Causes, as fields\n')[1] ?? '';
    const rows = causes
      .split('\n')
      .filter((line) => line.startsWith('| `'))
      .map((line) => /^\| `([a-z-]+)` \|/.exec(line)?.[1]);
    expect(rows.length, 'no table of kinds under "Causes, as fields"').toBeGreaterThan(0);
    expect([...rows].sort()).toEqual([...CAUSE_KINDS].sort());
  });
});

describe('docs/SIMULATOR.md, "The invariants"', () => {
  const table = section(SIMULATOR, 'The invariants').split('\n### ')[0]!;
  /** The violation kinds each row of the table names, in the row's first cell: `invariant (`kind`, `kind`)`. */
  const rows = table
    .split('\n')
    .filter((line) => line.startsWith('| ') && !line.startsWith('| invariant'))
    .map((line) => [...(/^\| [^|]*\(([^|]*)\) \|/.exec(line)?.[1] ?? '').matchAll(/`([a-z-]+)`/g)].map((match) => match[1]!));

  test('names every violation kind a run reports, and no other', () => {
    expect(rows.length).toBeGreaterThan(10);
    expect(rows.every((kinds) => kinds.length > 0)).toBe(true);
    expect([...new Set(rows.flat())].sort()).toEqual(Object.keys(VIOLATION_KINDS).sort());
  });

  test('lists the checks in the order their violations are reported', () => {
    const rowOf = (kind: string): number => rows.findIndex((kinds) => kinds.includes(kind));
    // the rules named after the kind they report (the others report several kinds: their rows are checked above)
    const positions = RUN_CHECKS.filter((rule) => rule.name in VIOLATION_KINDS).map((rule) => ({ rule: rule.name, row: rowOf(rule.name) }));
    expect(positions.length).toBeGreaterThan(15);
    expect(positions.map(({ row }) => row)).toEqual([...positions.map(({ row }) => row)].sort((a, b) => a - b));
  });

  test("names the envelope's attributes a filter policy can match, every one of them", () => {
    const reached = rows.findIndex((kinds) => kinds.includes('nothing-reached'));
    const row = table.split('\n').filter((line) => line.startsWith('| ') && !line.startsWith('| invariant'))[reached]!;
    for (const name of ENVELOPE_ATTRIBUTE_NAMES) expect(row).toContain(`\`${name}\``);
  });
});

/** Pages for contributors to the library, not for its users: they may name the repository's files. */
const CONTRIBUTOR_PAGES = ['docs/DESIGN.md', 'docs/BENCHMARKS.md'];

describe("the user pages name no file of the repository: a user of the package has none", () => {
  test.each(USER_DOCS.filter((doc) => doc !== 'README.md' && !CONTRIBUTOR_PAGES.includes(doc)))('%s', (doc) => {
    const text = withoutCode(fs.readFileSync(path.join(REPO, doc), 'utf8'));
    const paths = [...text.matchAll(/(?<![\w@./-])(?:test|simulator|lambda|lib|scripts|bench|example)\/[\w./-]+/g)].map((match) => match[0]);
    expect(paths).toEqual([]);
  });

  test.each(CONTRIBUTOR_PAGES)('%s says at the top that it is for contributors', (doc) => {
    const top = fs.readFileSync(path.join(REPO, doc), 'utf8').split('\n## ')[0]!;
    expect(top).toMatch(/contributors/i);
  });
});

describe('docs/COMPLIANCE.md, "Runtime dependencies"', () => {
  const dependencies = section(fs.readFileSync(path.join(REPO, 'docs', 'COMPLIANCE.md'), 'utf8'), 'Runtime dependencies');
  const manifest = (directory: string): { dependencies?: Record<string, string> } => JSON.parse(fs.readFileSync(path.join(REPO, directory, 'package.json'), 'utf8'));

  test("lists exactly the runtime package's direct dependencies", () => {
    const listed = [...dependencies.matchAll(/^\| `(@[^`]+)` \|/gm)].map((match) => match[1]!);
    expect(listed.sort()).toEqual(Object.keys(manifest('lambda').dependencies ?? {}).sort());
  });

  test('says the constructs package has no dependency of its own, which is so', () => {
    expect(dependencies).toContain('`idempotent-event-flow`: no dependency of its own');
    expect(manifest('.').dependencies ?? {}).toEqual({});
  });
});

describe('docs/SIMULATOR.md, "A complete scenario"', () => {
  const block = /### A complete scenario[\s\S]*?```ts\n([\s\S]*?)```/.exec(SIMULATOR)?.[1];

  /** The block as a file inside the repository (so its imports resolve), the package import mapped to the source. */
  function writeBlock(): { file: string; remove: () => void } {
    const directory = fs.mkdtempSync(path.join(REPO, 'test', 'docs', '.scenario-'));
    const file = path.join(directory, 'scenario.ts');
    fs.writeFileSync(file, block!.replace("'@idempotent-event-flow/simulator'", "'../../../simulator'"));
    return { file, remove: () => fs.rmSync(directory, { recursive: true, force: true }) };
  }

  test('is a complete module the simulator loads: a producer with seeded commands, probes and an operator', async () => {
    expect(block).toBeDefined();
    const { file, remove } = writeBlock();
    try {
      const scenario = await loadScenario(file, REPO);
      expect(scenario.producer?.function).toBe('Orders/PlaceOrder');
      expect(Object.keys(scenario.effects ?? {})).toEqual(['Billing', 'Notifications']);
      expect(Object.keys(scenario.operator ?? {})).toEqual(['Notifications']);
      let seed = 1;
      const random = (): number => ((seed = (seed * 16807) % 2147483647) / 2147483647);
      const commands = scenario.producer!.commands(3, random);
      expect(commands).toHaveLength(3);
      expect(commands[0]).toMatchObject({ orderId: 'order-1', customerId: expect.stringMatching(/^customer-[1-5]$/) });
    } finally {
      remove();
    }
  });

  test('type-checks against the simulator API', () => {
    const { file, remove } = writeBlock();
    try {
      const tsc = path.join(REPO, 'node_modules', '.bin', 'tsc');
      const result = spawnSync(tsc, ['--ignoreConfig', '--noEmit', '--strict', '--skipLibCheck', '--target', 'ES2022', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--types', 'node', file], {
        cwd: REPO,
        encoding: 'utf8',
      });
      expect(`${result.stdout}${result.stderr}`).toBe('');
      expect(result.status).toBe(0);
    } finally {
      remove();
    }
  });
});

describe('docs/SIMULATOR.md, "An HTTP stub in a scenario"', () => {
  const block = /### An HTTP stub in a scenario[\s\S]*?```ts\n([\s\S]*?)```/.exec(SIMULATOR)?.[1];

  /** The block as a file inside the repository (so its imports resolve), the package import mapped to the source. */
  function writeBlock(): { file: string; remove: () => void } {
    const directory = fs.mkdtempSync(path.join(REPO, 'test', 'docs', '.stub-scenario-'));
    const file = path.join(directory, 'scenario.ts');
    fs.writeFileSync(file, block!.replace("'@idempotent-event-flow/simulator'", "'../../../simulator'"));
    return { file, remove: () => fs.rmSync(directory, { recursive: true, force: true }) };
  }

  /** A port no one listens on now. */
  async function freePort(): Promise<number> {
    const server = net.createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as net.AddressInfo;
    await new Promise<void>((resolve) => server.close(() => resolve()));
    return port;
  }

  /** POSTs to the stub, once it listens (the module starts listening as it loads; each refused connection is retried, at most 10,000 times: a bound that catches a stub that never listens, not a slow machine). */
  async function post(url: string): Promise<number> {
    for (let attempt = 1; ; attempt += 1) {
      try {
        return (await fetch(url, { method: 'POST', body: '{}' })).status;
      } catch (error) {
        if (attempt >= 10_000) throw error;
        await new Promise((resolve) => setImmediate(resolve));
      }
    }
  }

  test('is a module the simulator loads that starts the stub on STUB_PORT, and its probe counts the POSTs per order', async () => {
    expect(block).toBeDefined();
    const port = await freePort();
    vi.stubEnv('STUB_PORT', String(port));
    const { file, remove } = writeBlock();
    try {
      const scenario = await loadScenario(file, REPO);
      expect(await post(`http://127.0.0.1:${port}/receipts/order-2`)).toBe(201);
      expect(await post(`http://127.0.0.1:${port}/receipts/order-2`)).toBe(201);
      expect(await post(`http://127.0.0.1:${port}/receipts/order-3`)).toBe(201);
      const events = ['order-1', 'order-2', 'order-3'].map((orderId) => ({ id: `order-placed-${orderId}`, data: { orderId } }));
      const probe = scenario.effects!.Receipts! as unknown as (context: { events: typeof events }) => Promise<unknown>;
      expect(await probe({ events })).toEqual([
        { subject: 'receipt of order-1', eventIds: ['order-placed-order-1'], applied: 0 },
        { subject: 'receipt of order-2', eventIds: ['order-placed-order-2'], applied: 2 },
        { subject: 'receipt of order-3', eventIds: ['order-placed-order-3'], applied: 1 },
      ]);
      expect(scenario.producer!.commands(2, () => 0)).toEqual([{ orderId: 'order-1' }, { orderId: 'order-2' }]);
    } finally {
      vi.unstubAllEnvs();
      remove();
    }
  });

  test('type-checks against the simulator API', () => {
    const { file, remove } = writeBlock();
    try {
      const tsc = path.join(REPO, 'node_modules', '.bin', 'tsc');
      const result = spawnSync(tsc, ['--ignoreConfig', '--noEmit', '--strict', '--skipLibCheck', '--target', 'ES2022', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--types', 'node', file], {
        cwd: REPO,
        encoding: 'utf8',
      });
      expect(`${result.stdout}${result.stderr}`).toBe('');
      expect(result.status).toBe(0);
    } finally {
      remove();
    }
  });
});

describe('docs/API.md facts', () => {
  test('DEFAULT_FAULT_RATES lists every default rate with its value', () => {
    const row = /\| `DEFAULT_FAULT_RATES` \| `\{ ([^}]*) \}` \|/.exec(API)?.[1];
    expect(row).toBeDefined();
    const documented = Object.fromEntries(row!.split(', ').map((pair) => pair.split(': ')).map(([key, value]) => [key, Number(value)]));
    expect(documented).toEqual(DEFAULT_FAULT_RATES);
  });

  test.each(['grantRecordMessages', 'grantProcessingRecords', 'grantBatchRead', 'grantOperator', 'grantOperatorRead', 'grantOperatorResolve'] as const)(
    "InboxTable's %s row names exactly the DynamoDB actions it grants",
    (grant) => {
      const stack = new Stack(new App({ builtinCloudFormationValidation: false }), 'Stack');
      const inbox = new InboxTable(stack, 'Inbox');
      const role = new iam.Role(stack, 'Role', { assumedBy: new iam.AccountRootPrincipal() });
      inbox[grant](role);
      const statements = Object.values(Template.fromStack(stack).findResources('AWS::IAM::Policy')).flatMap(
        (policy) => policy.Properties.PolicyDocument.Statement as Array<{ Action: string | string[] }>,
      );
      const granted = new Set(statements.flatMap((statement) => [statement.Action].flat()).filter((action) => action.startsWith('dynamodb:')));
      const row = API.split('\n').find((line) => line.startsWith(`| \`${grant}(grantee)\` |`));
      expect(row).toBeDefined();
      const documented = new Set(row!.split('|')[3]!.match(/dynamodb:\w+/g));
      expect([...documented].sort()).toEqual([...granted].sort());
    },
  );
});

describe('issue 30: what users of split stacks and of the outbox read', () => {
  test("docs/RESOURCES.md, 'The outbox item', names every attribute of the outbox item's wire format", () => {
    const outboxItem = section(RESOURCES, 'The outbox item');
    for (const [name, value] of Object.entries(OUTBOX_ITEM)) {
      expect(outboxItem, `OUTBOX_ITEM.${name}`).toContain(name === 'KEY_PREFIX' ? `\`${value}<eventId>\`` : `\`${value}\``);
    }
  });

  test("docs/CROSS-ACCOUNT.md, 'A flow split over stacks', creates subscribers from the flow in other stacks, with the dashboard in either", () => {
    const layout = section(CROSS_ACCOUNT, 'A flow split over stacks');
    expect(layout).toMatch(/new Subscriber\(ledgerStack, 'Ledger', \{ flow, entry: /);
    expect(layout).toContain('dashboard: true');
    expect(layout).toMatch(/new FlowDashboard\(ops, /);
  });

  test("docs/TESTING.md says how to raise vitest's 10-second hook timeout, to a limit above the simulator's own wait for DynamoDB Local", () => {
    const testing = TESTING;
    expect(testing).toMatch(/10 seconds \(`hookTimeout`\)/);
    expect(testing).toContain('Hook timed out in 10000ms');
    expect(testing).toContain(`gives up on a DynamoDB Local that has not started after ${START_HANG_LIMIT_MS / 60_000} minutes`);
    const hook = /\}, ([\d_]+)\);/.exec(testing)?.[1];
    const config = /hookTimeout: ([\d_]+), testTimeout: ([\d_]+)/.exec(testing);
    expect(hook).toBeDefined();
    expect(config).not.toBeNull();
    for (const limit of [hook!, config![1]!, config![2]!]) expect(Number(limit.replace(/_/g, ''))).toBeGreaterThan(START_HANG_LIMIT_MS);
  });
});

describe('docs/SIMULATOR.md, "Transaction conflicts"', () => {
  test("tells the runtime's contention retry as PROCESSING-MODES.md does: bounded by the invocation's time, not a count (new-user trial NU18-4)", () => {
    const conflicts = section(SIMULATOR, 'Transaction conflicts');
    expect(conflicts).toContain('the bound is time, not a count');
    expect(conflicts).not.toMatch(/up to \d+ times/);
  });
});
