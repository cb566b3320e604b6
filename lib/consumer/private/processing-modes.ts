import type { ProcessingModeName } from '../../../lambda/contract/environment';
import { CONSUMER_FACTORY } from '../../../lambda/contract/consumer-factories';
import type { ExpectedFactory } from '../../private/handler-entry';
import { ProcessingMode } from '../processing-mode';

type Exact<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type Assert<T extends true> = T;

/**
 * Compiles only while the values of {@link ProcessingMode} are exactly the runtime's `PROCESSING_MODE` values.
 * (A TypeScript enum member can not be initialised from a constant object, so the enum spells the values and this
 * type checks them against the runtime's single definition.)
 */
export type ProcessingModeMatchesRuntime = Assert<Exact<`${ProcessingMode}`, ProcessingModeName>>;

/** The value of `IEF_PROCESSING_MODE` for `mode`: the runtime's name of it. */
export function runtimeModeName(mode: ProcessingMode): ProcessingModeName {
  return mode;
}

/** `ProcessingMode.LEASE` and so on, for error messages. */
export function modeLabel(mode: ProcessingMode): string {
  const member = Object.entries(ProcessingMode).find(([, value]) => value === mode)?.[0];
  return member === undefined ? `'${String(mode)}'` : `ProcessingMode.${member}`;
}

/** Whether the runtime of `mode` keeps per-message records in an inbox table (every mode but AGGREGATE). */
export function usesInbox(mode: ProcessingMode): boolean {
  return mode !== ProcessingMode.AGGREGATE;
}

/** Whether the runtime of `mode` takes leases on messages (LEASE and MULTI_STEP), and so can block messages. */
export function usesLease(mode: ProcessingMode): boolean {
  return mode === ProcessingMode.LEASE || mode === ProcessingMode.MULTI_STEP;
}

/** The factory a handler of `mode` must be built with, and the mode of every factory, for the synth-time check. */
export function expectedFactory(mode: ProcessingMode): ExpectedFactory {
  return {
    factory: CONSUMER_FACTORY[runtimeModeName(mode)],
    modeOf: Object.fromEntries(Object.values(ProcessingMode).map((m) => [CONSUMER_FACTORY[runtimeModeName(m)], modeLabel(m)])),
  };
}
