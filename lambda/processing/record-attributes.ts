/**
 * Attribute names of the processing record (lease and multi-step modes): the shared {@link PROCESSING_RECORD} names. Pure: imports no AWS SDK.
 */
import { PROCESSING_RECORD } from '../wire-format';

/** Every attribute name of a processing record. */
export const RECORD_ATTRIBUTES = PROCESSING_RECORD;

/** How many operator resolutions a record keeps (the oldest are dropped). */
export const MAX_RESOLUTIONS = 20;
