/**
 * A seeded scheduler: the one thing that decides, at `--concurrency` above 1, in which order the execution
 * environments' DynamoDB requests reach DynamoDB Local (and their SQS requests the simulated queues), so that one seed
 * replays one run.
 *
 * Every DynamoDB request of an environment passes its proxy (simulator/faults/dynamodb-proxy.ts), which holds it here;
 * so does every request to the simulator's SQS endpoint (simulator/aws/sqs-endpoint.ts): two sends of one invocation
 * (two dead letters) otherwise reached their queue in whichever order their connections delivered them.
 * The scheduler waits until the run is quiet: every environment running an invocation has gone quiet (its worker has
 * no pending work but replies and virtual timers, and every request it sent has reached its proxy; see
 * simulator/lambda/worker-bootstrap.ts, "a replayable worker"), no environment is being started, and no crashed one's
 * outcome is still on its way (see {@link ScheduledEnvironment.holdScheduler}). Then it takes a TURN: one step, chosen
 * by the seed among everything that could happen next, and beside it one worker step (a start, a reply, a timer, a
 * time-out) of each other environment that has one, also chosen by the seed. The steps:
 * - `start` an invocation: send its event to the worker, which then runs until it is quiet;
 * - `forward` a held request (IAM, the fault decision, the transaction-conflict check, DynamoDB Local): the request is
 *   then ongoing, and holds its items against conflicting requests, until its reply step. The step ends once the proxy
 *   has dispatched it ({@link ScheduledRequest.dispatched}): while DynamoDB Local works on it, the seed may take another
 *   environment's step, but no other request is forwarded before its answer;
 * - `reply` to a forwarded request (once DynamoDB has answered): the worker gets its answer and runs until it is quiet;
 * - `fire` the earliest virtual timer of a worker with no request outstanding (an SDK retry's back-off, a handler's
 *   sleep), or `time-out` its invocation when that timer is due after the function's timeout.
 *
 * Requests are forwarded one at a time, so DynamoDB Local applies them in the seed's order, and two requests overlap (a
 * read forwarded, another environment's commit forwarded and answered, then the read answered) exactly when the seed
 * says so: what a lost update or a transaction conflict needs. What the seed can choose from never depends on how fast
 * a worker or DynamoDB Local was.
 *
 * Why the worker steps of a turn may run at once (on the machine's other core, beside DynamoDB Local): a worker step
 * only runs one worker until it is quiet again, and everything a worker does that another part of the run could see is
 * held (its requests, until their forward step) or delivered later (its log lines and its invocation's end, see
 * {@link ScheduledEnvironment.deliver}). So worker steps of different environments commute with each other and with
 * another environment's forward: a turn has the effect of its steps taken one after the other, and holding one of them
 * back to a later turn would only delay the requests it leads to, which wait for their forward step anyway. What the
 * run sees of a turn's workers comes at the turn's end, environment by environment in the order of their labels, each
 * environment's lines and end in the order the worker wrote them, and the run settles after each environment's: as if
 * the worker steps had been taken one after the other in that order. Two rules keep what one step at a time could reach:
 * a reply ends its request, which then holds its items no more, so the replies beside a turn's chosen forward wait until
 * that forward was admitted or refused (it meets every request ongoing at the turn's start); and a reply that ends a
 * write's hold sits out a turn it could run beside three times in four ({@link HOLD_KEPT_CHANCE}), so a write stays
 * ongoing for a number of turns the seed draws, and a transaction forwarded meanwhile on its item meets it.
 *
 * Why a scheduler of our own rather than fast-check's `fc.scheduler`: `fc.scheduler` orders promises that a test
 * wraps, all in one thread, and draws from fast-check's own random stream inside a property run. Here the tasks are
 * HTTP requests of worker threads, and the hard part is knowing when every one of them has arrived (the barrier
 * above); the choice itself is one draw of the run's seeded generator (mulberry32, simulator/schedule/seeded-random.ts),
 * which also makes a run replayable from the CLI's `--seed` alone.
 */
import { randomUUID } from 'node:crypto';
import { holdsItems } from '../aws/transaction-conflicts';
import { seededRandom, seedNumber } from './seeded-random';
import type { QuietReport } from '../lambda/worker-protocol';

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
  /** No reply will ever come (the process crashed at this request). */
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
  /** End the running invocation as timed out (its next timer is due after the function's timeout). */
  timeOut(): void;
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

type TicketState = 'held' | 'forwarding' | 'ready' | 'replying' | 'done';
/* 'forwarding' lasts from the forward step until the reply is ready; a dispatched ticket's forward step ends before. */

interface Ticket {
  readonly sortKey: string;
  /** Whether its request holds its items while ongoing (see transaction-conflicts.ts). */
  readonly holdsItems: boolean;
  readonly sequence: number;
  state: TicketState;
  allowForward(): void;
  allowReply?: () => void;
  /** Resolves when the ticket leaves `forwarding` (ready to reply, or ended). */
  progressed: Promise<void>;
  signalProgress(): void;
  /** Resolves when the proxy dispatched the request (see {@link ScheduledRequest.dispatched}). */
  wasDispatched: Promise<void>;
  signalDispatched(): void;
}

interface Step {
  readonly run: () => Promise<void> | void;
  readonly kind: StepKind;
  /** A reply that ends a request holding items (a write, a transaction): it ends the window other requests meet it in. */
  readonly endsHold?: boolean;
}

/** The kinds of step: an invocation's start, a request's forward, a reply, a timer fired, an invocation timed out. */
export type StepKind = keyof Omit<SchedulerFigures, 'steps' | 'turns'>;

/**
 * The chance that a reply ending a write's hold is left out of a turn it could run beside. A reply run beside every turn
 * ends its write one turn after its forward, and then nothing forwarded later meets it: seeds 7, 8 and 9 of a
 * 100-command run showed no transaction conflict (with one step at a time: 14, 27 and 26). Left out three times in
 * four, a write stays ongoing for 4 turns on average, a number the seed draws, as its reply step did when it had to be
 * picked among all: 8, 5 and 17 conflicts (at one in two: 6, 5 and 5), in the same time.
 */
const HOLD_KEPT_CHANCE = 0.75;

/**
 * How many event-loop turns the scheduler lets the simulator's own promise chains run before it looks again. One: a
 * turn runs what the poke's cause queued (its microtasks and `nextTick`s, an invocation's end reaching its event source
 * mapping, the next invocation asking to start), and what takes longer holds the scheduler itself (an environment being
 * started, a crashed worker being terminated: {@link StartHold}). Each turn of the main loop cost about 0.1 ms (6,800
 * looks in a 100-command run): three turns a look were 2 s of a 15 s run, and seeds 7 and replay-3 take the same course
 * with one as with three.
 */
const QUIET_TURNS = 1;

/** A ticket's state, read afresh (its state changes while a step awaits). */
function stateOf(ticket: Ticket): TicketState {
  return ticket.state;
}

/** One execution environment as the scheduler sees it. */
export class ScheduledEnvironment implements RequestScheduling {
  private readonly held: Ticket[] = [];
  /** Forwarded tickets, in the order they were forwarded: each offers its reply step (which waits for DynamoDB's answer). */
  private readonly forwarded: Ticket[] = [];
  private arrivals = 0;
  private answers = 0;
  private invocations = 0;
  private timerFires = 0;
  private running = false;
  private pendingStart: (() => void) | undefined;
  private report: QuietReport | undefined;
  private controls: WorkerControls | undefined;
  private timeoutMs = Number.POSITIVE_INFINITY;
  /** Until its first invocation begins, the environment's requests are its init's. */
  private initializing = true;
  private takenByInvocation = false;
  private readonly initRequests: (() => void)[] = [];

  /** `label` orders the environments in the scheduler's draws: the function's key and the environment's number. */
  public constructor(
    private readonly scheduler: SeededScheduler,
    public readonly label: string,
  ) {}

  public get tokenNamespace(): string {
    return this.scheduler.runId;
  }

  /** The worker's controls, and the function's timeout in ms. */
  public attach(controls: WorkerControls, timeoutMs: number): void {
    this.controls = controls;
    this.timeoutMs = timeoutMs;
  }

  /**
   * An invocation is ready to go to the worker: `send` sends it at the scheduler's `start` step (what it calls waits
   * for its forward steps, and what it writes is delivered after the turn, see {@link deliver}).
   */
  public requestStart(send: () => void): void {
    this.pendingStart = send;
    this.scheduler.poke();
  }

  /**
   * An invocation takes this environment (one started for it, or a spare): its init's requests go on from now, without
   * steps. The scheduler takes no step while an invocation waits for its environment's init, so nothing but inits
   * reaches DynamoDB meanwhile; a spare's init requests wait for this (an ES module's top-level `await` on a read, say),
   * since a spare initializes while the run goes on. Before, an init that awaited a request waited for a step that never
   * came, and timed out after 10 s.
   */
  public startingInvocation(): void {
    this.takenByInvocation = true;
    for (const release of this.initRequests.splice(0)) release();
  }

  /** An invocation was sent to the worker: the environment is running until it reports quiet. */
  public invocationBegan(): void {
    this.initializing = false;
    this.invocations += 1;
    this.running = true;
    this.scheduler.poke();
  }

  /**
   * Holds the scheduler (no step is taken) until the hold is released: while what follows an invocation's end happens
   * in real time (its crashed worker being terminated) and its outcome has not yet reached whoever waits for it, so
   * that nothing the outcome sets off (a retry, the environment's replacement) lands between steps at a moment the
   * machine's speed decides.
   */
  public holdScheduler(): StartHold {
    return this.scheduler.holdStart();
  }

  /** The invocation ended (returned, threw, crashed, timed out). */
  public invocationEnded(): void {
    this.running = false;
    this.scheduler.poke();
  }

  /** The worker reported quiet. */
  public quiet(report: QuietReport): void {
    this.report = report;
    this.scheduler.poke();
  }

  /**
   * What the run may see of this environment's worker (a line it wrote, its invocation's end): run at the scheduler's
   * next look once the run is quiet, in the order given, after the deliveries of environments whose labels sort first
   * and before any new turn (see the module comment). Also after the environment was disposed.
   */
  public deliver(delivery: () => void): void {
    this.scheduler.enqueue(this, delivery);
  }

  /** The environment is gone: it takes no part any more. */
  public disposed(): void {
    this.running = false;
    this.pendingStart = undefined;
    this.scheduler.forget(this);
    for (const ticket of [...this.held, ...this.forwarded]) {
      ticket.state = 'done';
      ticket.signalProgress();
    }
    this.held.length = 0;
    this.forwarded.length = 0;
  }

  public arrive(operation: string, body: Buffer): ScheduledRequest {
    this.arrivals += 1;
    if (this.initializing) return this.initRequest();
    let allowForward!: () => void;
    const forwardTurn = new Promise<void>((resolve) => {
      allowForward = resolve;
    });
    let signalProgress!: () => void;
    const progressed = new Promise<void>((resolve) => {
      signalProgress = resolve;
    });
    let signalDispatched!: () => void;
    const wasDispatched = new Promise<void>((resolve) => {
      signalDispatched = resolve;
    });
    const ticket: Ticket = {
      sortKey: `${operation}\n${body.toString('utf8')}`,
      holdsItems: holdsItems(operation),
      sequence: this.arrivals,
      state: 'held',
      allowForward,
      progressed,
      signalProgress,
      wasDispatched,
      signalDispatched,
    };
    this.held.push(ticket);
    this.scheduler.poke();
    return {
      forwardTurn,
      dispatched: () => ticket.signalDispatched(),
      replyTurn: () =>
        new Promise<void>((resolve) => {
          if (ticket.state === 'done') return resolve();
          ticket.state = 'ready';
          ticket.allowReply = resolve;
          ticket.signalProgress();
        }),
      answered: () => {
        this.answers += 1;
        ticket.state = 'done';
        // answered without its reply step (the forward failed): it is offered no more, and its forward step ends
        this.withdraw(ticket);
        this.scheduler.poke();
      },
      ended: () => {
        if (ticket.state === 'done') return;
        ticket.state = 'done';
        this.withdraw(ticket);
        this.scheduler.poke();
      },
    };
  }

  /** A ticket that is done: no step offers it any more, and a forward step waiting on it ends. */
  private withdraw(ticket: Ticket): void {
    for (const list of [this.held, this.forwarded]) if (list.includes(ticket)) list.splice(list.indexOf(ticket), 1);
    ticket.signalProgress();
  }

  /** A request of the init (see {@link startingInvocation}): no step of the seed; it goes once an invocation took the environment. */
  private initRequest(): ScheduledRequest {
    let allowForward!: () => void;
    const forwardTurn = new Promise<void>((resolve) => {
      allowForward = resolve;
    });
    if (this.takenByInvocation) allowForward();
    else this.initRequests.push(allowForward);
    return {
      forwardTurn,
      dispatched: () => undefined,
      replyTurn: () => Promise.resolve(),
      answered: () => {
        this.answers += 1;
        this.scheduler.poke();
      },
      ended: () => undefined,
    };
  }

  /** Whether the scheduler must wait for this environment before its next step. */
  public get blocking(): boolean {
    return this.running && !this.isQuiet();
  }

  /** Whether the environment takes part in the next step. */
  public get active(): boolean {
    return this.running || this.pendingStart !== undefined;
  }

  /** The steps this environment offers, in a fixed order. */
  public steps(): Step[] {
    return [...this.forwardSteps(), ...this.workerSteps()];
  }

  /** The steps that run its worker (a start, a reply, a timer, a time-out), in a fixed order. */
  public workerSteps(): Step[] {
    const steps: Step[] = [];
    const start = this.pendingStart;
    if (start !== undefined) {
      steps.push({
        kind: 'starts',
        run: () => {
          this.pendingStart = undefined;
          start();
        },
      });
      return steps;
    }
    for (const ticket of this.forwarded) steps.push({ kind: 'replies', run: () => this.reply(ticket), endsHold: ticket.holdsItems });
    const report = this.report;
    if (report !== undefined && report.timers > 0 && report.started === report.finished) {
      if (report.nextTimerDue > this.timeoutMs) steps.push({ kind: 'timeOuts', run: () => this.controls?.timeOut() });
      else steps.push({ kind: 'timers', run: () => this.fire() });
    }
    return steps;
  }

  /** Its held requests' forward steps, in a fixed order (none while an invocation waits to start). */
  private forwardSteps(): Step[] {
    if (this.pendingStart !== undefined) return [];
    const held = [...this.held].sort((a, b) => compareText(a.sortKey, b.sortKey) || a.sequence - b.sequence);
    return held.map((ticket) => ({ kind: 'forwards', run: () => this.forward(ticket) }));
  }

  /** Nothing the invocation waits for can happen: it times out. */
  public stuck(): void {
    this.running = false;
    this.controls?.timeOut();
  }

  private isQuiet(): boolean {
    const report = this.report;
    if (report === undefined || report.invocations !== this.invocations) return false;
    const otherOutstanding = report.started - report.finished - (report.scheduledStarted - report.scheduledFinished);
    return report.scheduledStarted === this.arrivals && report.scheduledFinished === this.answers && report.timersFired === this.timerFires && otherOutstanding === 0;
  }

  private async forward(ticket: Ticket): Promise<void> {
    this.held.splice(this.held.indexOf(ticket), 1);
    ticket.state = 'forwarding';
    // DynamoDB applies requests in the order they are forwarded: the one still with DynamoDB is answered first
    await this.scheduler.upstreamAnswered();
    if (stateOf(ticket) === 'done') return;
    ticket.allowForward();
    await Promise.race([ticket.progressed, ticket.wasDispatched]);
    if (stateOf(ticket) === 'done') return;
    // offered for its reply from now on, whether DynamoDB has answered yet or not: what the seed can choose does not
    // depend on how fast DynamoDB Local is
    this.forwarded.push(ticket);
    if (ticket.state === 'forwarding') this.scheduler.withUpstream(ticket.progressed);
  }

  private async reply(ticket: Ticket): Promise<void> {
    this.forwarded.splice(this.forwarded.indexOf(ticket), 1);
    // dispatched: DynamoDB's answer may still be on its way
    await ticket.progressed;
    if (ticket.state === 'done') return;
    ticket.state = 'replying';
    ticket.allowReply?.();
  }

  private fire(): void {
    this.timerFires += 1;
    this.controls?.fireTimer();
  }
}

/** The scheduler of one run; see the module comment. */
export class SeededScheduler {
  private readonly random: () => number;
  private readonly environments = new Set<ScheduledEnvironment>();
  private starts = 0;
  private stepping = false;
  private looking = false;
  private readonly counts = { turns: 0, steps: 0, starts: 0, forwards: 0, replies: 0, timers: 0, timeOuts: 0 };
  /** What environments' workers did that the run has not seen yet (see {@link ScheduledEnvironment.deliver}). */
  private readonly deliveries = new Map<ScheduledEnvironment, (() => void)[]>();
  /** What happened for a worker but cannot name its environment (see {@link deliverUnattributed}). */
  private readonly unattributed: { readonly sortKey: string; readonly delivery: () => void }[] = [];
  private readonly timed: Record<keyof SchedulerTimings, { count: number; milliseconds: number }> = {
    starts: { count: 0, milliseconds: 0 },
    forwards: { count: 0, milliseconds: 0 },
    replies: { count: 0, milliseconds: 0 },
    timers: { count: 0, milliseconds: 0 },
    timeOuts: { count: 0, milliseconds: 0 },
    held: { count: 0, milliseconds: 0 },
  };
  /** The step the current interval began with, and whether an invocation waited for an init during it. */
  private interval: { kind: StepKind; startedAt: number; held: boolean } | undefined;
  /** Resolves when the dispatched request still with DynamoDB (if any) has its answer. */
  private upstream: Promise<void> = Promise.resolve();

  /** Unique to this run (not drawn from the seed): see {@link RequestScheduling.tokenNamespace}. */
  public readonly runId = randomUUID();

  /** `seed` is the run's `--seed`. */
  public constructor(public readonly seed: string) {
    this.random = seededRandom(seedNumber(`scheduler|${seed}`));
  }

  /** The seed of a worker's `Math.random` and `crypto.randomUUID`: the run's seed, the function and the environment's number. */
  public workerSeed(functionKey: string, environmentNumber: number): number {
    return seedNumber(`worker|${this.seed}|${functionKey}|${environmentNumber}`);
  }

  /** A new environment, labelled by its function and number. */
  public environment(label: string): ScheduledEnvironment {
    const environment = new ScheduledEnvironment(this, label);
    this.environments.add(environment);
    return environment;
  }

  /** Holds the scheduler while an invocation gets its environment (see {@link StartHold}). */
  public holdStart(): StartHold {
    let holding = false;
    const hold: StartHold = {
      hold: () => {
        if (holding) return;
        holding = true;
        this.starts += 1;
      },
      release: () => {
        if (!holding) return;
        holding = false;
        this.starts -= 1;
        this.poke();
      },
    };
    hold.hold();
    return hold;
  }

  /** @internal resolves once the request last dispatched to DynamoDB has its answer. */
  public upstreamAnswered(): Promise<void> {
    return this.upstream;
  }

  /** @internal a dispatched request is with DynamoDB until `answered` resolves. */
  public withUpstream(answered: Promise<void>): void {
    this.upstream = answered;
  }

  /** What the scheduler did so far. */
  public figures(): SchedulerFigures {
    return { ...this.counts };
  }

  /** Where the real time went so far (see {@link SchedulerTimings}). */
  public timings(): SchedulerTimings {
    return Object.fromEntries(Object.entries(this.timed).map(([kind, timing]) => [kind, { ...timing }])) as unknown as SchedulerTimings;
  }

  /** Ends the current interval (the next step, or nothing left to run, ends it). */
  private closeInterval(now: number): void {
    const interval = this.interval;
    if (interval === undefined) return;
    const timing = this.timed[interval.held ? 'held' : interval.kind];
    timing.count += 1;
    timing.milliseconds += now - interval.startedAt;
    this.interval = undefined;
  }

  /** @internal `delivery` waits for the run to be quiet (see {@link ScheduledEnvironment.deliver}). */
  public enqueue(environment: ScheduledEnvironment, delivery: () => void): void {
    const queued = this.deliveries.get(environment);
    if (queued === undefined) this.deliveries.set(environment, [delivery]);
    else queued.push(delivery);
    this.poke();
  }

  /**
   * Something the run may see that happened for a worker but names no environment (a call to a service that is not
   * simulated, reported by the function's blocked endpoint): delivered after the environments' deliveries, in the order
   * of `sortKey`, whichever worker of a turn made its call first.
   */
  public deliverUnattributed(sortKey: string, delivery: () => void): void {
    this.unattributed.push({ sortKey, delivery });
    this.poke();
  }

  /** @internal an environment left the run. */
  public forget(environment: ScheduledEnvironment): void {
    this.environments.delete(environment);
    this.poke();
  }

  /** @internal something changed: look again once the simulator's own promise chains have run. */
  public poke(): void {
    if (this.looking) return;
    this.looking = true;
    let turns = 0;
    const look = (): void => {
      turns += 1;
      if (turns < QUIET_TURNS) {
        setImmediate(look);
        return;
      }
      this.looking = false;
      void this.step();
    };
    setImmediate(look);
  }

  private async step(): Promise<void> {
    if (this.starts > 0 && this.interval !== undefined) this.interval.held = true;
    if (this.stepping || this.starts > 0) return;
    const active = [...this.environments].filter((environment) => environment.active);
    if (active.some((environment) => environment.blocking)) return;
    // the run is quiet: first it sees what the last turn's workers did, one environment at a time
    if (this.deliverNext()) return;
    // nothing left to run: the run is between rounds, and that time is not the scheduler's
    if (active.length === 0) {
      this.closeInterval(performance.now());
      return;
    }
    // idle environments' requests (sent after their invocation ended) wait for their next invocation
    const ordered = active.sort(byLabel);
    const offered = ordered.flatMap((environment) => environment.steps().map((step) => ({ step, environment })));
    if (offered.length === 0) {
      // every invocation waits, and nothing it waits for can happen: each would run until its timeout
      for (const environment of active) environment.stuck();
      return;
    }
    const { step: first, environment: chosen } = offered[Math.floor(this.random() * offered.length)]!;
    // beside it, a worker step of each other environment that has one (see the module comment); a reply that ends a
    // write's hold sits the turn out as often as not, so the write stays ongoing for a number of turns the seed draws
    const beside = ordered.flatMap((environment) => {
      if (environment === chosen) return [];
      const own = environment.workerSteps();
      if (own.length === 0) return [];
      const step = own[Math.floor(this.random() * own.length)]!;
      return step.endsHold === true && this.random() < HOLD_KEPT_CHANCE ? [] : [step];
    });
    const now = performance.now();
    this.closeInterval(now);
    this.interval = { kind: first.kind, startedAt: now, held: false };
    this.stepping = true;
    this.counts.turns += 1;
    for (const step of [first, ...beside]) {
      this.counts.steps += 1;
      this.counts[step.kind] += 1;
    }
    try {
      const firstRun = Promise.resolve(first.run());
      // a reply beside a forward waits until that forward was admitted or refused: a reply ends its request, which then
      // holds its items no more, and the forward chosen first must meet every request still ongoing at the turn's start
      const admitted = first.kind === 'forwards' ? firstRun.then(noop, noop) : undefined;
      await Promise.all([firstRun, ...beside.map((step) => (admitted !== undefined && step.kind === 'replies' ? admitted.then(() => step.run()) : step.run()))]);
    } finally {
      this.stepping = false;
      this.poke();
    }
  }

  /**
   * Runs the queued deliveries of the first environment (by label) that has any, or else the unattributed ones; false
   * when there are none.
   */
  private deliverNext(): boolean {
    const [environment] = [...this.deliveries.keys()].sort(byLabel);
    let queued: (() => void)[];
    if (environment !== undefined) {
      queued = this.deliveries.get(environment)!;
      this.deliveries.delete(environment);
    } else if (this.unattributed.length > 0) {
      queued = this.unattributed
        .splice(0)
        .sort((a, b) => compareText(a.sortKey, b.sortKey))
        .map(({ delivery }) => delivery);
    } else {
      return false;
    }
    this.stepping = true;
    try {
      for (const delivery of queued) delivery();
    } finally {
      this.stepping = false;
      // the run settles (poke's quiet turns) before the next environment's deliveries or the next turn
      this.poke();
    }
    return true;
  }
}

function noop(): void {}

/** Code-unit order, the same on every machine (not the locale's, as `localeCompare` would be). */
function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function byLabel(a: ScheduledEnvironment, b: ScheduledEnvironment): number {
  return compareText(a.label, b.label);
}
