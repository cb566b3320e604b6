/**
 * The messages between a {@link ExecutionEnvironment} and its worker thread (the bootstrap in worker-bootstrap.ts,
 * which is plain JavaScript and must keep to these shapes).
 */
import type { LambdaContextData } from './lambda-context';

/** What the worker is started with (`workerData`). */
export interface WorkerData {
  /** The {@link VirtualClock} buffer: the worker's `Date` reads simulated time from it. */
  readonly clockBuffer: SharedArrayBuffer;
  /** `LAMBDA_TASK_ROOT`: the asset directory. */
  readonly taskRoot: string;
  /** `Handler`, e.g. `index.handler` or `dist/app.handler`. */
  readonly handler: string;
}

/** An error as the runtime reports it. */
export interface ReportedError {
  readonly errorName: string;
  readonly errorMessage: string;
}

/** Parent → worker: run the handler once. */
export interface InvokeMessage {
  readonly type: 'invoke';
  readonly invocationId: number;
  readonly event: unknown;
  readonly context: LambdaContextData;
}

/** Worker → parent. */
export type WorkerMessage =
  /** The handler loaded (the init phase ended). */
  | { readonly type: 'ready' }
  /** The handler could not be loaded (`Runtime.ImportModuleError`, `Runtime.HandlerNotFound`, ...). */
  | ({ readonly type: 'init-failed' } & ReportedError)
  /** The handler returned (its response, JSON round-tripped as Lambda serializes it). */
  | { readonly type: 'returned'; readonly invocationId: number; readonly response: unknown }
  /** The handler threw, rejected, or called back with an error. */
  | ({ readonly type: 'threw'; readonly invocationId: number } & ReportedError)
  /** An uncaught exception or unhandled rejection: the runtime process would exit. */
  | ({ readonly type: 'fatal' } & ReportedError);
