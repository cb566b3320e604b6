/**
 * docs/DEPLOYING.md (issue 43) states the `verify` command as it is: every option it names is one of the command's,
 * every option of the command is named, and the rules it lists are the ones verify runs.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, test } from 'vitest';
import { verifyCommand } from '../../simulator/cli/verify-command';
import { VERIFY_RULES } from '../../simulator/verify/verify-checks';

const DEPLOYING = fs.readFileSync(path.resolve(__dirname, '..', '..', 'docs', 'DEPLOYING.md'), 'utf8');
const VERIFY_SECTION = DEPLOYING.slice(DEPLOYING.indexOf('## 3. Verify'), DEPLOYING.indexOf('## 4. '));

describe('docs/DEPLOYING.md, "3. Verify"', () => {
  test("names verify's options, and only those", () => {
    const named = new Set([...VERIFY_SECTION.matchAll(/`[^`]*?(--[a-z-]+)/g)].map((match) => match[1]!).concat([...VERIFY_SECTION.matchAll(/\[(--[a-z-]+)/g)].map((match) => match[1]!)));
    const options = Object.keys(verifyCommand.options).map((name) => `--${name}`);
    // --region is the CLI's common option (every command's)
    expect([...named].filter((option) => !options.includes(option) && option !== '--region')).toEqual([]);
    expect(options.filter((option) => !VERIFY_SECTION.includes(option))).toEqual([]);
  });

  test('lists the rules verify runs, by name', () => {
    for (const rule of VERIFY_RULES) expect(VERIFY_SECTION).toContain(`\`${rule}\``);
  });
});
