/**
 * A seeded scheduler: the one thing that decides, at `--concurrency` above 1, in which order the execution
 * environments' DynamoDB requests reach DynamoDB Local (and their SQS and SNS requests the simulated queues and topics),
 * so that one seed replays one run.
 *
 * Every DynamoDB request of an environment passes its proxy (simulator/faults/dynamodb-proxy.ts), which holds it here;
 * so does every request to the simulator's SQS endpoint (simulator/aws/sqs-endpoint.ts): two sends of one invocation
 * (two dead letters) otherwise reached their queue in whichever order their connections delivered them; and every
 * request to its SNS endpoint (simulator/aws/sns-endpoint.ts): two fan-outs of an ordered relay publishing in one turn
 * otherwise reached their FIFO topic in the order of their connections.
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
 *   sleep), or `time-out` its invocation when that timer is due after the function's timeout. A worker whose only
 *   outstanding requests are calls outside the simulation is waited for in real time, up to
 *   {@link OUTSIDE_CALL_WAIT_MS}; then its timers go on as if the calls had not answered yet (an `AbortSignal.timeout`
 *   around the call fires), or its invocation times out when it has none, and the run is not replayable
 *   (simulator/schedule/outside-call-wait.ts).
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
import { seededRandom, seedNumber } from './seeded-random';
import { OUTSIDE_CALL_WAIT_MS } from './outside-call-wait';
import { compareText, ScheduledEnvironment, type EnvironmentHost } from './scheduled-environment';
import type { RealTimeEvent, SchedulerFigures, SchedulerTimings, StartHold, StepKind } from './schedule-types';

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

/** The real-time events a run keeps (each names its environment; a run with more says how many there were). */
export const REAL_TIME_EVENTS_KEPT = 100;

/** The scheduler of one run; see the module comment. */
export class SeededScheduler implements EnvironmentHost {
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
  /** The first {@link REAL_TIME_EVENTS_KEPT} real-time events, and how many there were. */
  private readonly realTime: RealTimeEvent[] = [];
  private realTimeCount = 0;
  /** Resolves when the dispatched request still with DynamoDB (if any) has its answer. */
  private upstream: Promise<void> = Promise.resolve();

  /** Unique to this run (not drawn from the seed): see {@link RequestScheduling.tokenNamespace}. */
  public readonly runId = randomUUID();

  /**
   * `seed` is the run's `--seed`; `outsideCallWaitMs` is how long, in real time, an invocation that waits on nothing
   * but calls outside the simulation is waited for before its virtual timers go on (see
   * {@link EnvironmentHost.outsideCallWaitMs}). @default {@link OUTSIDE_CALL_WAIT_MS}
   */
  public constructor(
    public readonly seed: string,
    public readonly outsideCallWaitMs: number = OUTSIDE_CALL_WAIT_MS,
  ) {
    this.random = seededRandom(seedNumber(`scheduler|${seed}`));
  }

  /** The seed of a worker's `Math.random` and its `node:crypto` and Web Crypto random sources: the run's seed, the function and the environment's number. */
  public workerSeed(functionKey: string, environmentNumber: number): number {
    return seedNumber(`worker|${this.seed}|${functionKey}|${environmentNumber}`);
  }

  /**
   * The `process.pid` the workers of the function see (each of its environments the same, as each Lambda execution
   * environment is a new machine whose runtime gets the same small id): the seed's, so an id that carries the pid
   * replays. A number from 2 to 32767.
   */
  public workerPid(functionKey: string): number {
    return 2 + (seedNumber(`pid|${this.seed}|${functionKey}`) % 32766);
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

  /** @internal see {@link EnvironmentHost.realTimeEvent}. */
  public realTimeEvent(environment: ScheduledEnvironment, change: string): void {
    this.realTimeCount += 1;
    if (this.realTime.length < REAL_TIME_EVENTS_KEPT) this.realTime.push({ environment: environment.label, turn: this.counts.turns, change });
  }

  /**
   * The real-time events so far, in the order they came (the first {@link REAL_TIME_EVENTS_KEPT}): none when the run was
   * the seed's alone, so its seed replays it.
   */
  public realTimeEvents(): readonly RealTimeEvent[] {
    return [...this.realTime];
  }

  /** How many real-time events there were (all of them, also those past {@link REAL_TIME_EVENTS_KEPT}). */
  public realTimeEventCount(): number {
    return this.realTimeCount;
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
    for (const environment of this.environments) environment.watchStall();
    if (this.starts > 0 && this.interval !== undefined) this.interval.held = true;
    if (this.stepping || this.starts > 0) return;
    const active = [...this.environments].filter((environment) => environment.active);
    if (active.some((environment) => environment.blocking)) return;
    // the run is quiet: first it sees what the last turn's workers did, one environment at a time
    if (this.deliverNext()) return;
    // nothing left to run: the run is between rounds, and that time is not the scheduler's
    // what every worker reported is what this turn is chosen from: a change from now on without a step is real time's
    for (const environment of this.environments) environment.looked();
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

function byLabel(a: ScheduledEnvironment, b: ScheduledEnvironment): number {
  return compareText(a.label, b.label);
}
