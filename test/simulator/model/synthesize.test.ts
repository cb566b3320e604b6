/** `synthesize` fails before running anything, with what to do, when there is no app or no CDK CLI to run. */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { NoAppError, SynthesisError, synthesize } from '../../../simulator/model/synthesize';

let project: string;
const saved = { PATH: process.env.PATH, HOME: process.env.HOME };

beforeEach(() => {
  // a project with nothing installed, and a home without ~/.cdk.json
  project = fs.mkdtempSync(path.join(os.tmpdir(), 'ief-synth-'));
  process.env.HOME = project;
});

afterEach(() => {
  process.env.PATH = saved.PATH;
  process.env.HOME = saved.HOME;
  fs.rmSync(project, { recursive: true, force: true });
});

describe('synthesize', () => {
  it('without --app, needs a cdk.json with an app in the project', async () => {
    const failing = synthesize({ cwd: project, outputDirectory: 'cdk.out' });
    await expect(failing).rejects.toThrow(NoAppError);
    await expect(failing).rejects.toThrow(`no app to synthesize: ${project} has no cdk.json with an "app" command, and no --app was given`);
    fs.writeFileSync(path.join(project, 'cdk.json'), JSON.stringify({ context: {} }));
    await expect(synthesize({ cwd: project, outputDirectory: 'cdk.out' })).rejects.toThrow('has no cdk.json with an "app" command');
  });

  it('needs the CDK CLI: the project\'s aws-cdk, or a cdk on the PATH', async () => {
    process.env.PATH = project;
    const failing = synthesize({ cwd: project, app: 'node app.js', outputDirectory: 'cdk.out' });
    await expect(failing).rejects.toThrow(SynthesisError);
    await expect(failing).rejects.toThrow(`the AWS CDK CLI was not found: aws-cdk is not installed in ${project} and there is no cdk on the PATH; npm install --save-dev aws-cdk`);
  });
});
