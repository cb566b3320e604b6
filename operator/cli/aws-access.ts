/**
 * Errors that say a command did not reach AWS (or the served run) or was refused by it: no Region, no credentials the
 * SDK's default chain finds, credentials AWS does not accept or that may not make the command's calls, an endpoint that
 * does not answer. Every command that reaches AWS says the same sentence with them ({@link awsAccessHint}): `verify`
 * with its own exit code (4), the operator commands with theirs (1). Pure: no dependencies.
 */

/** Error names (or codes) of credentials AWS refused, or of a call they may not make. */
const REFUSED = new Set([
  'CredentialsProviderError',
  'ExpiredToken',
  'ExpiredTokenException',
  'InvalidClientTokenId',
  'UnrecognizedClientException',
  'InvalidSignatureException',
  'SignatureDoesNotMatch',
  'IncompleteSignature',
  'MissingAuthenticationToken',
  'AccessDenied',
  'AccessDeniedException',
  'AuthorizationError',
]);

/** Node's codes of a connection that could not be made or was lost. */
const UNREACHABLE = new Set(['ENOTFOUND', 'EAI_AGAIN', 'ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EPIPE']);

/** The SDK's error when neither `--region`, `AWS_REGION` nor the profile gives a Region (a plain `Error`, no code). */
const NO_REGION = 'Region is missing';

function codesOf(error: unknown, depth = 0): string[] {
  if (typeof error !== 'object' || error === null || depth > 3) return [];
  const { name, code, cause, errors, message } = error as { name?: unknown; code?: unknown; cause?: unknown; errors?: unknown; message?: unknown };
  return [
    ...(typeof name === 'string' ? [name] : []),
    ...(typeof code === 'string' ? [code] : []),
    ...(message === NO_REGION ? [NO_REGION] : []),
    ...codesOf(cause, depth + 1),
    ...(Array.isArray(errors) ? errors.flatMap((item) => codesOf(item, depth + 1)) : []),
  ];
}

/**
 * What to check, said with every such error: how `who` (a command's name) reaches AWS. `endpoints`: where its
 * endpoints come from.
 * @default endpoints: the global options `--endpoint` (DynamoDB) and `--sqs-endpoint` (SQS), or `AWS_ENDPOINT_URL`
 */
export function awsAccessHint(who: string, endpoints = '--endpoint (DynamoDB) and --sqs-endpoint (SQS), or AWS_ENDPOINT_URL'): string {
  return (
    `${who} reaches AWS as the SDK does: credentials from the default chain (AWS_PROFILE, AWS_ACCESS_KEY_ID and ` +
    `AWS_SECRET_ACCESS_KEY, SSO, an instance or task role), the Region from --region or AWS_REGION, the endpoint from ` +
    `${endpoints} (a served run: what simulate --serve prints)`
  );
}

/**
 * Why `error` means AWS was not reached, or refused the credentials or calls, or no Region was given
 * (`<code>: <message>`), or undefined for any other error.
 */
export function awsUnreachedReason(error: unknown): string | undefined {
  const codes = codesOf(error);
  const matched = codes.find((code) => REFUSED.has(code) || UNREACHABLE.has(code) || code === NO_REGION);
  if (matched === undefined) return undefined;
  const message = error instanceof Error && error.message !== '' ? error.message : codes.join(', ');
  return matched === message ? message : `${matched}: ${message}`;
}
