/**
 * What the seeded scheduler (seeded-scheduler.ts) and the parts it schedules share: a held request and what holds it,
 * a worker's controls, a start hold, a step, and the figures of a run's turns and steps.
 */

/** A request held by a proxy until the scheduler lets it go. */
export interface ScheduledRequest {
  /** Resolves when the request may be forwarded (or answered without DynamoDB: denied, throttled, refused). */
  readonly forwardTurn: Promise<void>;
  /**
   * The request goes to DynamoDB now, and nothing the proxy does before its answer depends on that answer (no fault
   * acts after it): the scheduler may take other steps (another environment's reply, an invocation's start) while
   * DynamoDB works on it, but forwards no other request until this one is answered, so DynamoDB still applies requests
   * in the seed's order. Not calling it is always correct, only slower: the forward step then lasts until the reply is
   * ready.
   */
  dispatched(): void;
  /** The request has its reply (or its fault) ready; resolves when the reply may go to the worker. */
  replyTurn(): Promise<void>;
  /**
   * The reply was written (at its reply turn, or at once when forwarding failed), or the connection dropped without one
   * (a lost response).
   */
  answered(): void;
  /** No reply will ever come (the process crashed at this request, or the worker closed the request first). */
  ended(): void;
}

/** What a proxy holds its requests with: one per execution environment. */
export interface RequestScheduling {
  /** A request of `operation` with `body` arrived; it is held until the scheduler's `forward` step. */
  arrive(operation: string, body: Buffer): ScheduledRequest;
  /**
   * Unique to the run: the proxy mixes it into each transaction's `ClientRequestToken` before DynamoDB Local sees it.
   * A replayed run draws the same tokens from its seed, and DynamoDB keeps a token for 10 minutes: a second run of a
   * seed against the same DynamoDB Local would otherwise be answered as a retry of the first (nothing applied).
   */
  readonly tokenNamespace: string;
}

/** What the scheduler can make an environment's worker do. */
export interface WorkerControls {
  /** Fire the worker's earliest virtual timer. */
  fireTimer(): void;
  /**
   * End the running invocation as timed out: its next timer is due after the function's timeout, or (`stuck`) nothing
   * the scheduler drives can wake it.
   */
  timeOut(stuck?: boolean): void;
  /** Stop the running invocation as a stalled worker (see worker-stall.ts): it ran a step too long without going quiet. */
  stalled(limitMs: number): void;
}

/** A pending start (an invocation getting its environment): the scheduler takes no step while one is held. */
export interface StartHold {
  /** Hold again (an invocation that waited in the queue got an environment). Idempotent. */
  hold(): void;
  /** Let go. Idempotent. */
  release(): void;
}

/**
 * Where a run's real time went, by the kind of the step chosen first in each turn: from a turn until the next one (what
 * its steps woke ran until the run was quiet again, the workers and DynamoDB Local included, and what the turn's workers
 * wrote was delivered); `held` counts the intervals in which the scheduler waited instead for an environment's init (a
 * cold start) or for a crashed one's end. A measurement of this machine, not part of a run's result.
 */
export type SchedulerTimings = Readonly<Record<StepKind | 'held', { readonly count: number; readonly milliseconds: number }>>;

/** The turns and steps a scheduler took, the steps by kind. */
export interface SchedulerFigures {
  /** Turns: one step chosen among all, with the worker steps of other environments that ran beside it. */
  readonly turns: number;
  readonly steps: number;
  readonly starts: number;
  readonly forwards: number;
  readonly replies: number;
  readonly timers: number;
  readonly timeOuts: number;
}

/** A step the scheduler can take: what it runs and its kind. */
export interface Step {
  readonly run: () => Promise<void> | void;
  readonly kind: StepKind;
  /** A reply that ends a request holding items (a write, a transaction): it ends the window other requests meet it in. */
  readonly endsHold?: boolean;
}

/** The kinds of step: an invocation's start, a request's forward, a reply, a timer fired, an invocation timed out. */
export type StepKind = keyof Omit<SchedulerFigures, 'steps' | 'turns'>;

/**
 * A worker whose report changed while its environment was given no step (see `ScheduledEnvironment.quiet`): something
 * outside the seed acted on it between two steps (an outside server closing a connection the function keeps, a socket's
 * data, a child process ending), at a moment the machine's speed chose. What the seed then chose may differ from one run
 * of the seed to the next, so the run's replay line may give another run.
 */
export interface RealTimeEvent {
  /** The environment: its function's key and its number, `<function key>#<n>`. */
  readonly environment: string;
  /** The turns the scheduler had taken when the change came. */
  readonly turn: number;
  /** What changed, e.g. `virtual timers pending 2 → 1 (the earliest due 3000 → 4000 ms into its invocation)`. */
  readonly change: string;
}
