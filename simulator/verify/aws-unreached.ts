/**
 * Errors that say `verify` did not reach AWS (or the served run) or was refused by it, so it has no verdict: no
 * credentials the SDK's default chain finds, credentials AWS does not accept or that may not make verify's calls, an
 * endpoint that does not answer. The CLI gives them their own exit code (4), apart from VIOLATED (1) and NOT PROVEN (5),
 * and says what to check.
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

function codesOf(error: unknown, depth = 0): string[] {
  if (typeof error !== 'object' || error === null || depth > 3) return [];
  const { name, code, cause, errors } = error as { name?: unknown; code?: unknown; cause?: unknown; errors?: unknown };
  return [
    ...(typeof name === 'string' ? [name] : []),
    ...(typeof code === 'string' ? [code] : []),
    ...codesOf(cause, depth + 1),
    ...(Array.isArray(errors) ? errors.flatMap((item) => codesOf(item, depth + 1)) : []),
  ];
}

/** What to check, said with every such error. */
export const AWS_ACCESS_HINT =
  'verify reaches AWS as the SDK does: credentials from the default chain (AWS_PROFILE, AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, SSO, an instance or task role), the Region from --region or AWS_REGION, the endpoint from AWS_ENDPOINT_URL (a served run: the one simulate --serve prints); the permissions it needs are in docs/DEPLOYING.md';

/**
 * Why `error` means AWS was not reached or refused verify's credentials or calls (`<code>: <message>`), or undefined
 * for any other error.
 */
export function awsUnreachedReason(error: unknown): string | undefined {
  const codes = codesOf(error);
  const matched = codes.find((code) => REFUSED.has(code) || UNREACHABLE.has(code));
  if (matched === undefined) return undefined;
  const message = error instanceof Error && error.message !== '' ? error.message : codes.join(', ');
  return `${matched}: ${message}`;
}
