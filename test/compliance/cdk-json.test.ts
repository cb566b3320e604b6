import { App, CfnParameter, Stack } from 'aws-cdk-lib';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import * as cxapi from 'aws-cdk-lib/cx-api';
import { afterEach, describe, expect, test, vi } from 'vitest';
import { readCdkJsonContext } from '../support/compliance';

/** A template that is valid but has a CloudFormation best-practice warning (W2001, unused parameter). */
function synthWithWarning(context: Record<string, unknown>): () => unknown {
  const app = new App({ context });
  const stack = new Stack(app, 'Warning');
  new CfnParameter(stack, 'Unused', { type: 'String', default: 'x' });
  new sqs.CfnQueue(stack, 'Queue');
  return () => app.synth();
}

describe('cdk.json', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  test('sets every feature flag aws-cdk-lib currently recommends, at the recommended value', () => {
    const context = readCdkJsonContext();

    for (const [flag, recommended] of Object.entries(cxapi.CURRENTLY_RECOMMENDED_FLAGS)) {
      expect(context[flag], flag).toEqual(recommended);
    }
  });

  test('turns CloudFormation validation findings into errors, in strict mode', () => {
    const context = readCdkJsonContext();

    expect(context[cxapi.VALIDATE_AGAINST_DEFAULT_RULES]).toBe(true);
    expect(context[cxapi.STRICT_CFN_VALIDATE_ERRORS]).toBe(true);
  });

  test('makes synthesis fail on a CloudFormation warning', () => {
    vi.spyOn(console, 'error').mockImplementation(() => undefined);

    // Under vitest (NODE_ENV=test) the error carries the whole report; under the CLI it is printed to stderr.
    expect(synthWithWarning(readCdkJsonContext())).toThrow(/W2001[\s\S]*A copy of this report can be found in/);
  });

  test('without the validation flags, the same warning does not fail synthesis', () => {
    vi.spyOn(console, 'error').mockImplementation(() => undefined);

    expect(synthWithWarning({})).not.toThrow();
  });
});
