/**
 * One execution environment as the seeded scheduler sees it (see seeded-scheduler.ts for the whole): its held and
 * forwarded requests (tickets), its worker's pending start, timers and time-out, and the steps it offers a turn.
 */
import { holdsItems } from '../aws/transaction-conflicts';
import type { QuietReport } from '../lambda/worker-protocol';
import { outsideCallChange } from './outside-call-wait';
import { WORKER_STALL_LIMIT_MS } from './worker-stall';
import { reportChange } from './report-change';
import type { RequestScheduling, ScheduledRequest, StartHold, Step, WorkerControls } from './schedule-types';

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

/** Code-unit order, the same on every machine (not the locale's, as `localeCompare` would be). */
export function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** What an environment needs of the scheduler of its run ({@link SeededScheduler} is it). */
export interface EnvironmentHost {
  /** Unique to the run (see {@link RequestScheduling.tokenNamespace}). */
  readonly runId: string;
  /** Something changed: look whether the run is quiet and take the next turn. */
  poke(): void;
  /** Holds the scheduler until released (see {@link StartHold}). */
  holdStart(): StartHold;
  /** Runs `delivery` (what the run may see of the environment's worker) at the turn's end. */
  enqueue(environment: ScheduledEnvironment, delivery: () => void): void;
  /** The environment is gone: its deliveries are dropped. */
  forget(environment: ScheduledEnvironment): void;
  /** Resolves when the request forwarded last has its answer. */
  upstreamAnswered(): Promise<void>;
  /** `answered` resolves when the request just forwarded has its answer. */
  withUpstream(answered: Promise<void>): void;
  /** The environment's worker changed while it was given no step: `change` says how (see {@link RealTimeEvent}). */
  realTimeEvent(environment: ScheduledEnvironment, change: string): void;
  /** How long, in real time, a worker waiting on nothing but calls outside the simulation is waited for (outside-call-wait.ts). */
  readonly outsideCallWaitMs: number;
}

/** A ticket's state, read afresh (its state changes while a step awaits). */
function stateOf(ticket: Ticket): TicketState {
  return ticket.state;
}

/** One execution environment as the scheduler sees it. */
export class ScheduledEnvironment implements RequestScheduling {
  private readonly held: Ticket[] = [];
  /** Forwarded tickets, in the order they were forwarded: each offers its reply step (which waits for DynamoDB's answer). */
  private readonly forwarded: Ticket[] = [];
  /** Every ticket not answered or ended yet, whatever its state. */
  private readonly unanswered = new Set<Ticket>();
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
  /** Armed while the worker runs without going quiet (see {@link watchStall}). */
  private stallTimer: NodeJS.Timeout | undefined;
  /** Armed while the worker waits on nothing but calls outside the simulation (see outside-call-wait.ts). */
  private outsideTimer: NodeJS.Timeout | undefined;
  /** The worker's calls (started/finished) when the outside-call wait began: a call answered, or another started, begins it again. */
  private outsideWaitFor = '';
  /** Its outside calls did not answer within the wait: its timers go on while they are open. */
  private outsideWaitOver = false;
  /** What the scheduler made this environment do so far: its steps, a time-out when stuck, an invocation taking it. */
  private given = 0;
  /**
   * The worker's last report that said all the environment knew (see {@link isQuiet}) once its first invocation began,
   * and {@link given} then: a later report that differs, with nothing given since, is a real-time event.
   */
  private settled: { readonly report: QuietReport; readonly given: number } | undefined;

  /** `label` orders the environments in the scheduler's draws: the function's key and the environment's number. */
  public constructor(
    private readonly scheduler: EnvironmentHost,
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
    this.given += 1;
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
    this.outsideWaitOver = false;
    this.scheduler.poke();
  }

  /**
   * The worker reported quiet. A report that differs from the last one that said all the environment knew, while the
   * environment was given nothing since, came from something outside the seed acting on the worker between two steps
   * (its timers, its calls or its requests changed at a moment real time chose): the scheduler is told (see
   * {@link RealTimeEvent}). A worker's own work after a step always comes before its report: the report waits until
   * the worker has no pending work left.
   */
  public quiet(report: QuietReport): void {
    if (report.started - report.finished - (report.scheduledStarted - report.scheduledFinished) === 0) this.outsideWaitOver = false;
    const settled = this.settled;
    if (settled !== undefined && settled.given === this.given) {
      const change = reportChange(settled.report, report);
      if (change !== undefined) this.scheduler.realTimeEvent(this, change);
    }
    this.report = report;
    this.settle();
    this.scheduler.poke();
  }

  /**
   * The scheduler looked at this environment (the run was quiet): what its worker reported last is what the next turn
   * is chosen from, so a change from now on with no step given is a real-time event too (a report that came while the
   * environment's last request had not reached its proxy yet was not settled when it came).
   */
  public looked(): void {
    if (this.settled === undefined || this.settled.given !== this.given) this.settle();
  }

  /** Takes the current report as the settled one when it says all the environment knows (not during the init). */
  private settle(): void {
    const report = this.report;
    this.settled = !this.initializing && report !== undefined && this.isQuiet() ? { report, given: this.given } : undefined;
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
    this.unwatchStall();
    this.watchOutsideCalls();
    this.pendingStart = undefined;
    this.scheduler.forget(this);
    // every request not answered yet: held, forwarded, or between the two (its forward step is under way)
    for (const ticket of this.unanswered) {
      ticket.state = 'done';
      ticket.signalProgress();
      // a request DynamoDB answered waits for its reply turn before its proxy releases its hold on its items: it gets
      // it now (the reply goes nowhere), or the hold would stay for the rest of the run and refuse every later
      // transaction on the items with TransactionConflict
      ticket.allowReply?.();
    }
    this.held.length = 0;
    this.forwarded.length = 0;
    this.unanswered.clear();
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
    this.unanswered.add(ticket);
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
        // the worker closed it (its own socket timeout, an abort) or died: it waits for no answer any more, and its
        // report counts the request finished; counted as answered, or the environment could never be quiet again
        // (the run waited for it until the stalled-worker watchdog)
        this.answers += 1;
        ticket.state = 'done';
        this.withdraw(ticket);
        this.scheduler.poke();
      },
    };
  }

  /** A ticket that is done: no step offers it any more, and a forward step waiting on it ends. */
  private withdraw(ticket: Ticket): void {
    for (const list of [this.held, this.forwarded]) if (list.includes(ticket)) list.splice(list.indexOf(ticket), 1);
    this.unanswered.delete(ticket);
    ticket.signalProgress();
    // a request that ends (its connection closed) waiting for its reply turn gets it: its proxy then releases its hold
    ticket.allowReply?.();
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
          this.given += 1;
          this.pendingStart = undefined;
          start();
        },
      });
      return steps;
    }
    for (const ticket of this.forwarded) steps.push({ kind: 'replies', run: () => this.reply(ticket), endsHold: ticket.holdsItems });
    const report = this.report;
    // calls outside the simulation still open after the wait (outside-call-wait.ts) hold the timers back no more
    const outsideOver = this.outsideWaitOver && this.outsideCallsOnly() > 0;
    if (report !== undefined && report.timers > 0 && (report.started === report.finished || outsideOver)) {
      if (report.nextTimerDue > this.timeoutMs) steps.push({ kind: 'timeOuts', run: () => this.timeOut() });
      else steps.push({ kind: 'timers', run: () => this.fire() });
    } else if (report !== undefined && outsideOver) {
      steps.push({ kind: 'timeOuts', run: () => this.timeOut() });
    }
    return steps;
  }

  /** Its held requests' forward steps, in a fixed order (none while an invocation waits to start). */
  private forwardSteps(): Step[] {
    if (this.pendingStart !== undefined) return [];
    const held = [...this.held].sort((a, b) => compareText(a.sortKey, b.sortKey) || a.sequence - b.sequence);
    return held.map((ticket) => ({ kind: 'forwards', run: () => this.forward(ticket) }));
  }

  /**
   * Called at each look of the scheduler: while the worker runs without going quiet (the scheduler waits for it), a
   * real-time watchdog of {@link WORKER_STALL_LIMIT_MS} runs, from the look that first found it running to the one that finds it
   * quiet; the wait for its turns is not counted. If it expires, the invocation is stopped as a stalled worker, a
   * problem of the run: no function timeout is real time under the scheduler.
   */
  public watchStall(): void {
    this.watchOutsideCalls();
    if (!this.blocking) return this.unwatchStall();
    if (this.stallTimer !== undefined) return;
    this.stallTimer = setTimeout(() => {
      this.stallTimer = undefined;
      if (this.blocking) this.controls?.stalled(WORKER_STALL_LIMIT_MS);
    }, WORKER_STALL_LIMIT_MS);
    this.stallTimer.unref?.();
  }

  /**
   * While the worker waits on nothing but calls outside the simulation, a real-time wait of the host's
   * `outsideCallWaitMs` runs, from its last report (each call that answers, each new one, begins it again); when it
   * expires with the calls still open, its timers go on (see outside-call-wait.ts).
   */
  private watchOutsideCalls(): void {
    const waiting = this.running && this.outsideCallsOnly() > 0;
    if (!waiting || this.outsideWaitOver) {
      if (this.outsideTimer !== undefined) clearTimeout(this.outsideTimer);
      this.outsideTimer = undefined;
      return;
    }
    const calls = this.outsideCallsKey();
    if (this.outsideTimer !== undefined && this.outsideWaitFor === calls) return;
    if (this.outsideTimer !== undefined) clearTimeout(this.outsideTimer);
    this.outsideWaitFor = calls;
    this.outsideTimer = setTimeout(() => {
      this.outsideTimer = undefined;
      if (this.outsideWaitFor !== this.outsideCallsKey()) return this.scheduler.poke();
      const outstanding = this.running ? this.outsideCallsOnly() : 0;
      if (outstanding === 0 || this.outsideWaitOver) return;
      this.outsideWaitOver = true;
      this.scheduler.realTimeEvent(this, outsideCallChange(outstanding, this.scheduler.outsideCallWaitMs, this.report?.timers ?? 0));
      this.settle();
      this.scheduler.poke();
    }, this.scheduler.outsideCallWaitMs);
    this.outsideTimer.unref?.();
  }

  /** The worker's calls started and finished, as its last report says. */
  private outsideCallsKey(): string {
    return this.report === undefined ? '' : `${this.report.started}/${this.report.finished}`;
  }

  /** How many calls outside the simulation the worker waits on when it waits on nothing else (0 otherwise). */
  private outsideCallsOnly(): number {
    const report = this.report;
    if (report === undefined || report.invocations !== this.invocations) return 0;
    const otherOutstanding = report.started - report.finished - (report.scheduledStarted - report.scheduledFinished);
    const scheduledSettled = report.scheduledStarted === this.arrivals && report.scheduledFinished === this.answers && report.timersFired === this.timerFires;
    return scheduledSettled && report.scheduledStarted === report.scheduledFinished ? otherOutstanding : 0;
  }

  private unwatchStall(): void {
    if (this.stallTimer === undefined) return;
    clearTimeout(this.stallTimer);
    this.stallTimer = undefined;
  }

  /** Nothing the invocation waits for can happen: it times out. */
  public stuck(): void {
    this.running = false;
    this.timeOut(true);
  }

  private timeOut(stuck = false): void {
    this.given += 1;
    if (stuck) this.controls?.timeOut(true);
    else this.controls?.timeOut();
  }

  private isQuiet(): boolean {
    const report = this.report;
    if (report === undefined || report.invocations !== this.invocations) return false;
    const otherOutstanding = report.started - report.finished - (report.scheduledStarted - report.scheduledFinished);
    return report.scheduledStarted === this.arrivals && report.scheduledFinished === this.answers && report.timersFired === this.timerFires && (otherOutstanding === 0 || this.outsideWaitOver);
  }

  private async forward(ticket: Ticket): Promise<void> {
    this.given += 1;
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
    this.given += 1;
    this.forwarded.splice(this.forwarded.indexOf(ticket), 1);
    // dispatched: DynamoDB's answer may still be on its way
    await ticket.progressed;
    if (ticket.state === 'done') return;
    ticket.state = 'replying';
    ticket.allowReply?.();
  }

  private fire(): void {
    this.given += 1;
    this.timerFires += 1;
    this.controls?.fireTimer();
  }
}
