/**
 * The runtime's consumer factory of each processing mode, by name: the constructs check at synth that a subscriber's
 * handler is built with the factory of its mode. lambda/consumer/factory-names.ts makes the compiler check that the
 * runtime exports each of them. Imports nothing but the contract.
 */
import type { ProcessingModeName } from './environment';

/** The factory of each processing mode (keys: the `IEF_PROCESSING_MODE` values). */
export const CONSUMER_FACTORY = {
  transactional: 'createTransactionalConsumer',
  lease: 'createLeaseConsumer',
  'multi-step': 'createMultiStepConsumer',
  aggregate: 'createAggregateConsumer',
} as const satisfies { readonly [mode in ProcessingModeName]: string };
