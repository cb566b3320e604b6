/**
 * A flow split over stacks and aws-cdk-lib's cross-stack reference strength (docs/CROSS-ACCOUNT.md, "A flow split over
 * stacks"): the constructs pass the flow's topic, key and outbox to a subscriber stack as plain references and set no
 * strength, so the app's `@aws-cdk/core:defaultCrossStackReferences` decides. Unset, aws-cdk-lib warns once per app
 * and keeps strong references (Fn::ImportValue of the flow stack's exports); set to "strong" or "weak", it does not warn,
 * and "weak" reads the flow stack's outputs (Fn::GetStackOutput) with no export.
 */
import { App, Stack } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import { describe, expect, test } from 'vitest';
import { IdempotentEventFlow, Subscriber } from '../../lib';
import { HANDLER_ENTRY } from '../fixtures/construct-test-kit';

const FLAG = '@aws-cdk/core:defaultCrossStackReferences';
const NO_STRENGTH = Match.stringLikeRegexp('No cross-stack-reference strength configured');

/** The layout of the docs: the flow in Payments, a subscriber of it in Ledger. */
function splitFlow(strength?: 'strong' | 'weak'): { payments: Stack; ledger: Stack } {
  const app = new App({ builtinCloudFormationValidation: false, context: { 'aws:cdk:bundling-stacks': [], ...(strength === undefined ? {} : { [FLAG]: strength }) } });
  const payments = new Stack(app, 'Payments');
  const flow = new IdempotentEventFlow(payments, 'Payments', { dashboard: true });
  const ledger = new Stack(app, 'Ledger');
  new Subscriber(ledger, 'Ledger', { flow, entry: HANDLER_ENTRY });
  return { payments, ledger };
}

/** The cross-stack intrinsics a template uses, and how many exports it has. */
function references(stack: Stack): { importValue: boolean; getStackOutput: boolean; exports: number } {
  const template = Template.fromStack(stack).toJSON() as { Outputs?: Record<string, { Export?: unknown }> };
  const text = JSON.stringify(template);
  const outputs = Object.values(template.Outputs ?? {});
  return { importValue: text.includes('"Fn::ImportValue"'), getStackOutput: text.includes('"Fn::GetStackOutput"'), exports: outputs.filter((output) => output.Export !== undefined).length };
}

describe('a flow split over stacks: cross-stack reference strength', () => {
  test("unset: aws-cdk-lib's one warning, on the subscriber's stack, and strong references (imports of the flow stack's exports)", () => {
    const { payments, ledger } = splitFlow();
    Annotations.fromStack(ledger).hasWarning('/Ledger', NO_STRENGTH);
    Annotations.fromStack(payments).hasNoWarning('*', NO_STRENGTH);
    expect(references(ledger)).toMatchObject({ importValue: true, getStackOutput: false });
    expect(references(payments).exports).toBeGreaterThan(0);
  });

  test('"strong": no warning, the same imports', () => {
    const { payments, ledger } = splitFlow('strong');
    for (const stack of [payments, ledger]) Annotations.fromStack(stack).hasNoWarning('*', NO_STRENGTH);
    expect(references(ledger)).toMatchObject({ importValue: true, getStackOutput: false });
  });

  test('"weak": no warning; the subscriber stack reads the flow stack\'s outputs, which export nothing', () => {
    const { payments, ledger } = splitFlow('weak');
    for (const stack of [payments, ledger]) Annotations.fromStack(stack).hasNoWarning('*', Match.stringLikeRegexp('cross-stack-reference|defaultCrossStackReferences'));
    expect(references(ledger)).toMatchObject({ importValue: false, getStackOutput: true });
    expect(references(payments).exports).toBe(0);
  });
});
