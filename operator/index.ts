/**
 * The operator's decision library, imported as `@idempotent-event-flow/operator`: the rules the `idempotent-event-flow`
 * operator commands apply (blocked-message resolution, the redrive of a subscriber's dead letters, the ordered path's
 * fences and redrive plan), for a team's own tooling and for the simulator's operator pass, which calls these same
 * functions. Re-exports only. Handlers import `@idempotent-event-flow/runtime`, never this package.
 *
 * @module @idempotent-event-flow/operator
 */

// blocked messages of lease and multi-step subscribers: list, show, resolve (audited, version-checked)
export {
  BlockedMessages,
  DEFAULT_DEDUPLICATION_WINDOW_SECONDS,
  ResolveRefusedError,
  type BlockedMessage,
  type BlockedMessagesOptions,
  type ListBlockedMessagesOptions,
  type ResolveBlockedMessageInput,
  type ResolveRefusal,
} from './blocked/blocked-messages';

// a subscriber's dead letters: what `dlq redrive` decides for each one
export { decideSubscriberRedrive, DEFAULT_SAFETY_MARGIN_SECONDS, type RecordLookup, type RedriveDecision, type RedriveRules, type SubscriberRedriveRules } from './cli/dead-letters/redrive-decision';
export { deadLetterView, type DeadLetterQueueKind, type DeadLetterView } from './cli/dead-letters/dead-letter-view';
export { lookUpInboxRecord } from './cli/dead-letters/record-lookup';
export type { QueueMessage } from './cli/dead-letters/queue-messages';

// the ordered path: fences, the redrive plan, the records an ordered redrive reads
export { SequenceFences, type SequenceFenceState, type SequenceFencesOptions } from './ordered/sequence-fences';
export { planOrderedRedrive, type IFenceReader, type OrderedDeadLetter, type OrderedRedrivePlan, type PlannedDeadLetter } from './ordered/redrive-plan';
export { OrderedEventRecords, type IOrderedEventRecords, type OrderedEventRecord, type OrderedEventRecordsOptions } from './ordered/ordered-event-records';
