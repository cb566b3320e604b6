/**
 * Checked by the compiler: every factory name the contract gives the constructs (contract/consumer-factories.ts) is an
 * export of the runtime's entry point, so renaming a factory fails the build instead of every consumer's synth.
 */
import type { CONSUMER_FACTORY } from '../contract/consumer-factories';
import type * as runtime from '../index';

type Assert<T extends true> = T;

/** Compiles only while each of {@link CONSUMER_FACTORY}'s names is exported by the runtime. */
export type ConsumerFactoriesExported = Assert<(typeof CONSUMER_FACTORY)[keyof typeof CONSUMER_FACTORY] extends keyof typeof runtime ? true : false>;
