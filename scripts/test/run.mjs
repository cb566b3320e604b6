/**
 * `npm test`: the typecheck and the test suite at once, failing if either fails. The typecheck (about 11 s wall,
 * 16 s CPU) ran before the suite; the suite leaves about an eighth of a 2-core machine idle (its files wait on
 * DynamoDB Local and on workers), which the typecheck now fills. Arguments are the suite's (vitest's), e.g.
 * `npm test -- test/simulator`. The typecheck's output is printed once it ends, in one piece.
 */
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import * as path from 'node:path';

const require = createRequire(import.meta.url);

/** The file of a package's command (its package.json `bin`), as `npm test` would run it from node_modules/.bin. */
function binOf(packageName, command) {
  const manifest = require.resolve(`${packageName}/package.json`);
  const { bin } = require(manifest);
  return path.join(path.dirname(manifest), typeof bin === 'string' ? bin : bin[command]);
}

const tsc = binOf('typescript', 'tsc');
const vitest = binOf('vitest', 'vitest');

/** Runs `node <script> <args>`; resolves with its exit code (its output kept when `keepOutput`). */
function run(script, args, keepOutput) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [script, ...args], { stdio: keepOutput ? ['ignore', 'pipe', 'pipe'] : 'inherit' });
    let output = '';
    if (keepOutput) {
      child.stdout.on('data', (chunk) => (output += chunk));
      child.stderr.on('data', (chunk) => (output += chunk));
    }
    child.on('close', (code, signal) => resolve({ code: code ?? (signal ? 1 : 0), output }));
  });
}

const [typecheck, suite] = await Promise.all([run(tsc, ['-p', 'tsconfig.json', '--noEmit'], true), run(vitest, ['run', ...process.argv.slice(2)], false)]);
if (typecheck.output !== '') process.stdout.write(typecheck.output);
if (typecheck.code !== 0) console.error(`typecheck failed (tsc exited with ${typecheck.code})`);
process.exit(typecheck.code !== 0 ? typecheck.code : suite.code);
