import type { ProcessingRecordView, StepState } from './processing-record';

/** What a delivery holds after claiming or taking over a record. */
export interface HeldRecord {
  readonly key: string;
  readonly eventId: string;
  /** This delivery's token. */
  readonly owner: string;
  /** The version of the record as this delivery last wrote it. */
  readonly version: number;
  readonly stepOrder: readonly string[];
  readonly steps: Readonly<Record<string, StepState>>;
  readonly context: Readonly<Record<string, unknown>>;
  /** The step marked PROCESSING for this owner; absent once the record is COMPLETED. */
  readonly activeStep?: string;
  readonly leaseExpiresAtEpochMilliseconds: number;
}

/** What a claim found. */
export type ClaimResult =
  | { readonly claimed: true; readonly held: HeldRecord }
  /** A live record exists; `existing` is it (absent only if it vanished between the write and the read). */
  | { readonly claimed: false; readonly existing?: ProcessingRecordView };
