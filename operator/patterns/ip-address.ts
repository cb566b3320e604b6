/**
 * IPv4/IPv6 CIDR matching for the `cidr` operator of event patterns and SNS filter policies ("IP address matching":
 * the value is an IP address in the block). Pure; uses only `node:net` to validate address syntax.
 */
import { isIPv4, isIPv6 } from 'node:net';

/** An IP address as a number, with its family. */
interface IpAddress {
  readonly family: 4 | 6;
  readonly value: bigint;
}

const IPV4_BITS = 32;
const IPV6_BITS = 128;

function parseIpv4(text: string): bigint {
  return text.split('.').reduce((sum, octet) => (sum << 8n) | BigInt(Number(octet)), 0n);
}

function parseIpv6(text: string): bigint {
  let address = text;
  // an embedded IPv4 tail (e.g. ::ffff:10.0.0.1) counts as two 16-bit groups
  const lastColon = address.lastIndexOf(':');
  const tail = address.slice(lastColon + 1);
  if (isIPv4(tail)) {
    const v4 = parseIpv4(tail);
    address = `${address.slice(0, lastColon + 1)}${(v4 >> 16n).toString(16)}:${(v4 & 0xffffn).toString(16)}`;
  }
  const [head, rest] = address.split('::') as [string, string | undefined];
  const headGroups = head === '' ? [] : head.split(':');
  const restGroups = rest === undefined || rest === '' ? [] : rest.split(':');
  const missing = 8 - headGroups.length - restGroups.length;
  const groups = rest === undefined ? headGroups : [...headGroups, ...Array<string>(missing).fill('0'), ...restGroups];
  return groups.reduce((sum, group) => (sum << 16n) | BigInt(parseInt(group, 16)), 0n);
}

/** The address, or undefined when the text is not an IPv4 or IPv6 address. */
export function parseIpAddress(text: string): IpAddress | undefined {
  if (isIPv4(text)) return { family: 4, value: parseIpv4(text) };
  if (isIPv6(text)) return { family: 6, value: parseIpv6(text) };
  return undefined;
}

/** A parsed CIDR block: a predicate over address strings. */
export type CidrMatcher = (address: string) => boolean;

/**
 * Parses `address/prefix-length` (IPv4 or IPv6). Returns the matcher, or a sentence saying what is wrong. Host bits
 * set in the address are ignored (the block is the address masked to the prefix length).
 */
export function parseCidr(text: string): CidrMatcher | string {
  const parts = text.split('/');
  if (parts.length !== 2) return `"${text}" is not a CIDR block: exactly one "/" is required`;
  const [addressText, lengthText] = parts as [string, string];
  const network = parseIpAddress(addressText);
  if (network === undefined) return `"${addressText}" is not an IPv4 or IPv6 address`;
  const bits = network.family === 4 ? IPV4_BITS : IPV6_BITS;
  if (!/^\d{1,3}$/.test(lengthText) || Number(lengthText) > bits) {
    return `the prefix length of "${text}" must be an integer from 0 to ${bits}, but was "${lengthText}"`;
  }
  const hostBits = BigInt(bits - Number(lengthText));
  const networkPrefix = network.value >> hostBits;
  return (address: string): boolean => {
    const candidate = parseIpAddress(address);
    return candidate !== undefined && candidate.family === network.family && candidate.value >> hostBits === networkPrefix;
  };
}
