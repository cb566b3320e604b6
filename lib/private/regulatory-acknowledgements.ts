import { Validations } from 'aws-cdk-lib';
import type { IConstruct } from 'constructs';

/** The rule prefixes of cdk-nag's regulatory packs: NIST 800-53 rev 5, HIPAA Security, PCI DSS 3.2.1. */
const REGULATORY_PACK_PREFIXES = ['NIST.800.53.R5', 'HIPAA.Security', 'PCI.DSS.321'] as const;

/**
 * Acknowledges the cdk-nag rule `rule` (e.g. `IAMNoInlinePolicy`) of every regulatory pack that has it, on `scope`
 * and what is under it, with `reason`. A pack that does not run, or has no such rule, ignores the acknowledgement.
 */
export function acknowledgeInRegulatoryPacks(scope: IConstruct, rule: string, reason: string): void {
  Validations.of(scope).acknowledge(...REGULATORY_PACK_PREFIXES.map((prefix) => ({ id: `${prefix}-${rule}`, reason })));
}

/** Why the library's roles use inline policies (`IAMNoInlinePolicy`). */
export const INLINE_POLICY_REASON =
  'Inline policies are the least-privilege design: each role belongs to one function or pipe and holds only statements ' +
  'scoped to the ARNs of its own queue, table, topic, key and log group. A customer-managed policy would be a separate, ' +
  'attachable resource that could be attached to other principals, and it adds nothing a reviewer can not read here.';
