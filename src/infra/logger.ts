import pino from 'pino';

export type Logger = pino.Logger;

/** Structured JSON logs on stderr (stdout stays free for CLI output and MCP stdio). */
export function createLogger(level: string): Logger {
  return pino({ level, base: { service: 'mnemograph' } }, pino.destination(2));
}
