/**
 * The Sid of every IAM statement the library's constructs add to an identity policy: `IdempotentEventFlow`, then where
 * the statement comes from, then a number when one principal holds more than one statement from there. Where it comes
 * from is a grant method (`grantAppendEvents`, written `GrantAppendEvents` in the Sid) or, for a construct's own wiring,
 * the construct's class (`OutboxRelay`). The constructs write it (lib/private/library-statements.ts); the simulator's
 * IAM report reads it to tell the library's grants from the user's. Imports nothing.
 */

/** The first part of every Sid the library writes (IAM allows A-Z, a-z and 0-9 in a Sid). */
export const LIBRARY_SID_PREFIX = 'IdempotentEventFlow';

/** Where a statement of the library comes from: a grant method's name (`grantOperator`) or a construct's class name. */
const ORIGIN = /^[A-Za-z]+$/;

/**
 * The Sid of the `ordinal`-th distinct statement (from 1) a principal holds from `origin`.
 *
 * @throws when `origin` is not letters only (a number would be read as the ordinal)
 */
export function librarySid(origin: string, ordinal: number): string {
  if (!ORIGIN.test(origin)) throw new Error(`the origin of a library statement must be letters only, got '${origin}'`);
  return `${LIBRARY_SID_PREFIX}${origin.charAt(0).toUpperCase()}${origin.slice(1)}${ordinal > 1 ? String(ordinal) : ''}`;
}

/**
 * Where the statement with `sid` comes from: a grant method's name (`grantAppendEvents`) or a construct's class name
 * (`OutboxRelay`); undefined for a statement the library did not write.
 */
export function libraryStatementOrigin(sid: string | undefined): string | undefined {
  if (sid === undefined || !sid.startsWith(LIBRARY_SID_PREFIX)) return undefined;
  const origin = sid.slice(LIBRARY_SID_PREFIX.length).replace(/[0-9]+$/, '');
  if (!ORIGIN.test(origin)) return undefined;
  return /^Grant[A-Z]/.test(origin) ? `g${origin.slice(1)}` : origin;
}
