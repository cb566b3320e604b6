/**
 * The TCP addresses a process listens on, read from Linux's /proc: the socket inodes of the process's open files
 * (/proc/<pid>/fd/* → `socket:[inode]`) matched against the LISTEN rows of /proc/<pid>/net/tcp and tcp6. Used to tell
 * whether the DynamoDB Local we started is the one listening on a port (dynamodb-local.ts), and by the tests.
 */
import { existsSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';

const LISTEN = '0A';

/** `0100007F` (tcp, little-endian) → `127.0.0.1`. */
function ipv4(hex: string): string {
  return [6, 4, 2, 0].map((at) => parseInt(hex.slice(at, at + 2), 16)).join('.');
}

/** tcp6's 32 hex digits (four little-endian words) → an IPv6 address; an IPv4-mapped one (::ffff:a.b.c.d) → `a.b.c.d`. */
function ipv6(hex: string): string {
  const bytes = [0, 8, 16, 24].flatMap((word) => [6, 4, 2, 0].map((at) => parseInt(hex.slice(word + at, word + at + 2), 16)));
  if (bytes.slice(0, 10).every((b) => b === 0) && bytes[10] === 0xff && bytes[11] === 0xff) return bytes.slice(12).join('.');
  const groups = [];
  for (let i = 0; i < 16; i += 2) groups.push(((bytes[i]! << 8) | bytes[i + 1]!).toString(16));
  return groups.join(':').replace(/(^|:)0(:0)+(:|$)/, '::');
}

/** `address:port` of every socket the process `pid` listens on (TCP, IPv4 and IPv6). */
export function listeningAddresses(pid: number): string[] {
  const inodes = new Set<string>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const match = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (match) inodes.add(match[1]!);
    } catch {
      // closed while we looked
    }
  }
  const addresses: string[] = [];
  for (const [file, decode] of [
    ['tcp', ipv4],
    ['tcp6', ipv6],
  ] as const) {
    const rows = readFileSync(`/proc/${pid}/net/${file}`, 'utf8').trim().split('\n').slice(1);
    for (const row of rows) {
      const columns = row.trim().split(/\s+/);
      const [localAddress, state, inode] = [columns[1]!, columns[3]!, columns[9]!];
      if (state !== LISTEN || !inodes.has(inode)) continue;
      const [host, port] = localAddress.split(':') as [string, string];
      addresses.push(`${decode(host)}:${parseInt(port, 16)}`);
    }
  }
  return addresses.sort();
}

/** Whether this system shows a process's sockets under /proc (Linux), so {@link listeningAddresses} can be asked. */
export function canReadListeningSockets(pid: number): boolean {
  return existsSync(`/proc/${pid}/fd`) && existsSync(`/proc/${pid}/net/tcp`);
}
