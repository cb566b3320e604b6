/**
 * The seeded fault decisions of the run's S3 endpoint (simulator/aws/s3-endpoint.ts), from the run's {@link FaultPlan}:
 * per request a pure function of the seed, the function, its invocation key, the operation, the object and the
 * attempt; per object a pure function of the seed and the object. The order requests arrive in decides nothing.
 */
import type { S3FaultQuestion, S3ObjectFault, S3RequestFault } from '../aws/s3-endpoint';
import type { FaultKind, FaultPlan } from './fault-plan';

/** The fault kind reported for each S3 fault. */
export const S3_FAULT_KIND: Readonly<Record<Exclude<S3RequestFault, 'none'> | S3ObjectFault, FaultKind>> = {
  fail: 's3-request-failure',
  slow: 's3-slow-reply',
  'lose-response': 's3-lost-response',
  missing: 's3-object-missing',
  altered: 's3-object-altered',
};

/** The fault of one object request: a lost reply (PutObject only), a refusal, a slow reply, or none. */
export function decideS3RequestFault(plan: FaultPlan, question: S3FaultQuestion): S3RequestFault {
  const rates = plan.rates;
  const key = [question.functionKey, question.invocationKey, question.operation, `${question.bucket}/${question.key}`, question.attempt] as const;
  if (plan.happens(rates.s3Failure ?? 0, 's3-request-failure', ...key)) return 'fail';
  if (question.operation === 'PutObject' && plan.happens(rates.lostResponse, 's3-lost-response', ...key)) return 'lose-response';
  if (plan.happens(rates.s3Slow ?? 0, 's3-slow-reply', ...key)) return 'slow';
  return 'none';
}

/** What becomes of an object at its first read: missing, altered, or nothing. */
export function decideS3ObjectFault(plan: FaultPlan, bucket: string, key: string): S3ObjectFault | undefined {
  const rates = plan.rates;
  if (plan.happens(rates.s3ObjectMissing ?? 0, 's3-object-missing', bucket, key)) return 'missing';
  if (plan.happens(rates.s3ObjectAltered ?? 0, 's3-object-altered', bucket, key)) return 'altered';
  return undefined;
}
