import { describe, expect, test } from 'vitest';
import { terminalOutput, terminalText } from '../../operator/cli/terminal-text';

describe('terminalText: one value from data, on one line', () => {
  test('escapes C0 controls, DEL, C1 controls, bidi and other format characters, separators and unpaired surrogates, as JSON writes them', () => {
    expect(terminalText('a\nb\rc\td')).toBe('a\\nb\\rc\\td');
    expect(terminalText('\u0000\u001b[2J\u007f\u0085\u009b')).toBe('\\u0000\\u001b[2J\\u007f\\u0085\\u009b');
    expect(terminalText('\u202eevil\u202c\u2066x\u2069\u200b\u200d\ufeff\u00ad')).toBe('\\u202eevil\\u202c\\u2066x\\u2069\\u200b\\u200d\\ufeff\\u00ad');
    expect(terminalText('\u2028\u2029')).toBe('\\u2028\\u2029');
    expect(terminalText('tag\u{E0041}')).toBe('tag\\udb40\\udc41');
    expect(terminalText('lone\ud800')).toBe('lone\\ud800');
  });

  test('leaves printable text as it is, other scripts and emoji included, and writes a backslash as two so an escape is never ambiguous', () => {
    expect(terminalText('Bestellung-ÄÖÜ 注文 طلب 🎉')).toBe('Bestellung-ÄÖÜ 注文 طلب 🎉');
    expect(terminalText('C:\\temp\\u001b')).toBe('C:\\\\temp\\\\u001b');
  });
});

describe('terminalOutput: a whole output', () => {
  test('keeps the line feeds of the layout and a carriage return that begins the output (a progress line redrawn in place)', () => {
    expect(terminalOutput('a\nb\n')).toBe('a\nb\n');
    expect(terminalOutput('\r[###   ] 50%')).toBe('\r[###   ] 50%');
    expect(terminalOutput('a\rb\u001b[2K\u202e')).toBe('a\\rb\\u001b[2K\\u202e');
  });

  test('JSON output stays the same JSON: what JSON.stringify leaves raw (DEL, C1, bidi) becomes a JSON escape of the same character', () => {
    const value = { type: 'Order\u202eevil\u202c\u0085\u009b2J\u007f\u200b', id: 'a\nb\u001b' };
    const json = JSON.stringify(value, null, 2);
    expect(json).toMatch(/[\u202e\u0085\u009b\u007f\u200b]/u);
    const output = terminalOutput(json);
    expect(output.replace(/\n/g, '')).not.toMatch(/[\p{Cc}\p{Cf}]/u);
    expect(JSON.parse(output)).toEqual(value);
  });

  test('does not touch what terminalText wrote', () => {
    const text = terminalText('x\n\u001b\\y');
    expect(terminalOutput(text)).toBe(text);
  });
});
