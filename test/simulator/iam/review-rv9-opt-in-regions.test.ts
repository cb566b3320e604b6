/**
 * Review rv9, R-1 (red, product not fixed): the simulator's list of opt-in Regions (simulator/iam/sns-principal.ts,
 * OPT_IN_REGIONS: the SNS delivery principal it evaluates, and the `undeliverable-subscription` rule) is a hand copy
 * that has drifted from the list the constructs decide by (aws-cdk-lib's region-info `isOptInRegion`, used by
 * lib/private/sns-delivery-principal.ts and the synth refusal in lib/private/environments.ts). For a Region in one and
 * not the other (me-west-1 today), the constructs write a queue policy for `sns.me-west-1.amazonaws.com` that the
 * simulator's SNS (delivering as `sns.amazonaws.com`) is refused by (a flow that would work fails the run), and a
 * hand-built subscription into that Region passes the simulator's `undeliverable-subscription` rule though the
 * constructs refuse it at synth.
 */
import { RegionInfo } from 'aws-cdk-lib/region-info';
import { expect, test } from 'vitest';
import { OPT_IN_REGIONS, snsDeliveryPrincipal } from '../../../simulator/iam/sns-principal';
import { snsDeliveryPrincipal as constructsPrincipal } from '../../../lib/private/sns-delivery-principal';

test('R-1: the simulator knows every Region the constructs take for an opt-in Region', () => {
  const constructs = RegionInfo.regions.map((region) => region.name).filter((name) => RegionInfo.get(name).isOptInRegion);
  expect(constructs.filter((name) => !OPT_IN_REGIONS.has(name))).toEqual([]);
  // the consequence: the principal each side names for a topic there delivering to eu-west-1
  for (const region of constructs) expect(snsDeliveryPrincipal(region, 'eu-west-1'), region).toBe(constructsPrincipal(region, 'eu-west-1'));
});

test('and the other way: the simulator takes no Region for opt-in that the constructs do not (the principal they write would be refused in the run)', () => {
  expect([...OPT_IN_REGIONS].filter((name) => !RegionInfo.get(name).isOptInRegion)).toEqual([]);
});
