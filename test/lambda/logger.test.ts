import { describe, expect, test } from 'vitest';
import { createLogger, logLevelFromEnvironment } from '../../lambda/logger';

describe('createLogger', () => {
  const now = () => new Date('2024-05-01T12:00:00.000Z');

  test('writes one JSON line per call with level, message, timestamp, context and fields', () => {
    const lines: string[] = [];
    const logger = createLogger({ sink: (line) => lines.push(line), now, context: { subscriber: 'billing' } });
    logger.info('processed', { eventId: 'e1' });
    logger.warn('failed');
    expect(lines).toHaveLength(2);
    expect(lines.every((line) => !line.includes('\n'))).toBe(true);
    expect(JSON.parse(lines[0] as string)).toEqual({ level: 'INFO', message: 'processed', timestamp: '2024-05-01T12:00:00.000Z', subscriber: 'billing', eventId: 'e1' });
    expect(JSON.parse(lines[1] as string)).toMatchObject({ level: 'WARN', message: 'failed' });
  });

  test('a child adds its context to every line', () => {
    const lines: string[] = [];
    const logger = createLogger({ sink: (line) => lines.push(line), now, context: { subscriber: 'billing' } });
    logger.child({ sqsMessageId: 'm1' }).child({ eventId: 'e1' }).error('dead-lettered');
    expect(JSON.parse(lines[0] as string)).toMatchObject({ level: 'ERROR', subscriber: 'billing', sqsMessageId: 'm1', eventId: 'e1' });
  });

  test('serializes errors with their name, message and cause', () => {
    const lines: string[] = [];
    const logger = createLogger({ sink: (line) => lines.push(line), now });
    const error = new TypeError('outer', { cause: new RangeError('inner') });
    logger.error('failed', { error });
    expect(JSON.parse(lines[0] as string).error).toEqual({ name: 'TypeError', message: 'outer', cause: { name: 'RangeError', message: 'inner' } });
  });

  test('a circular field does not make logging throw', () => {
    const lines: string[] = [];
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    createLogger({ sink: (line) => lines.push(line), now }).info('odd', { circular });
    expect(JSON.parse(lines[0] as string)).toMatchObject({ level: 'INFO', message: 'odd', logError: 'unserializable fields' });
  });

  test('writes its level and those above it; a child keeps the level', () => {
    const lines: string[] = [];
    const logger = createLogger({ sink: (line) => lines.push(line), now, level: 'WARN' });
    logger.debug('d');
    logger.info('i');
    logger.child({ a: 1 }).info('child info');
    logger.warn('w');
    logger.child({ a: 1 }).error('e');
    expect(lines.map((line) => (JSON.parse(line) as { message: string }).message)).toEqual(['w', 'e']);
  });

  test('the level defaults to AWS_LAMBDA_LOG_LEVEL (TRACE as DEBUG, FATAL as ERROR), else INFO', () => {
    expect(logLevelFromEnvironment({})).toBe('INFO');
    expect(logLevelFromEnvironment({ AWS_LAMBDA_LOG_LEVEL: 'DEBUG' })).toBe('DEBUG');
    expect(logLevelFromEnvironment({ AWS_LAMBDA_LOG_LEVEL: 'trace' })).toBe('DEBUG');
    expect(logLevelFromEnvironment({ AWS_LAMBDA_LOG_LEVEL: 'WARN' })).toBe('WARN');
    expect(logLevelFromEnvironment({ AWS_LAMBDA_LOG_LEVEL: 'FATAL' })).toBe('ERROR');
    expect(logLevelFromEnvironment({ AWS_LAMBDA_LOG_LEVEL: 'LOUD' })).toBe('INFO');
    const lines: string[] = [];
    createLogger({ sink: (line) => lines.push(line), now }).debug('hidden at the default INFO');
    expect(lines).toEqual([]);
  });
});
