/**
 * DynamoDB item size, by the rules AWS documents for capacity ("Item sizes and formats"): an attribute costs the
 * UTF-8 length of its name plus its value; strings their UTF-8 length; numbers about 1 byte per two significant
 * digits + 1; binary its length; booleans and null 1 byte; lists and maps 3 bytes plus 1 byte per element plus the
 * elements (and, in a map, their names). Works on the wire format (`{ S: ... }`, `{ N: ... }`, ...).
 */
export type WireValue = Record<string, unknown>;
export type WireItem = Record<string, WireValue>;

const utf8 = (value: string): number => Buffer.byteLength(value, 'utf8');

/** Size of a number's value: leading and trailing zeros are trimmed, 1 byte per two significant digits, + 1. */
export function numberSize(value: string): number {
  const digits = value.replace(/^[+-]/, '').replace(/[eE].*$/, '').replace('.', '').replace(/^0+/, '').replace(/0+$/, '');
  return Math.ceil(Math.max(digits.length, 1) / 2) + 1;
}

export function valueSize(value: WireValue): number {
  const [type, inner] = Object.entries(value)[0] ?? ['NULL', true];
  switch (type) {
    case 'S':
      return utf8(inner as string);
    case 'N':
      return numberSize(inner as string);
    case 'B':
      return Buffer.from(inner as string, 'base64').length;
    case 'BOOL':
    case 'NULL':
      return 1;
    case 'SS':
      return (inner as string[]).reduce((sum, s) => sum + utf8(s), 0);
    case 'NS':
      return (inner as string[]).reduce((sum, n) => sum + numberSize(n), 0);
    case 'BS':
      return (inner as string[]).reduce((sum, b) => sum + Buffer.from(b, 'base64').length, 0);
    case 'L':
      return 3 + (inner as WireValue[]).reduce((sum, element) => sum + 1 + valueSize(element), 0);
    case 'M':
      return 3 + Object.entries(inner as WireItem).reduce((sum, [name, element]) => sum + 1 + utf8(name) + valueSize(element), 0);
    default:
      throw new Error(`item-size: unknown attribute type ${type}`);
  }
}

/** Size of an item in bytes. */
export function itemSize(item: WireItem | undefined): number {
  if (item === undefined) return 0;
  return Object.entries(item).reduce((sum, [name, value]) => sum + utf8(name) + valueSize(value), 0);
}

/** Write capacity units AWS charges for writing an item of `bytes` (1 WCU per started 1 KB, at least 1), x2 in a transaction. */
export function writeUnits(bytes: number, transactional: boolean): number {
  return Math.max(1, Math.ceil(bytes / 1024)) * (transactional ? 2 : 1);
}
