/** The Lambda entry of the ordered fan-out function the `OrderedRelay` construct deploys. */
import { createOrderedFanOut } from './ordered-fan-out';

/** Publishes each event of the relay's FIFO queue to the ordered SNS FIFO topic. */
export const handler = createOrderedFanOut();
