import { Readable } from 'node:stream';
import express, { type Request, type RequestHandler, type Response } from 'express';
import { errorMessage } from '../errors';
import { MAX_DEPTH } from '../schemas';

/**
 * The JSON body parser of the API: UTF-8 JSON, bounded in size (`limit`, after decoding a
 * gzip, deflate or br Content-Encoding) and in depth. Depth is checked on the raw bytes
 * before JSON.parse runs: a body nested a million deep costs JSON.parse seconds and a
 * gigabyte, and every recursive step after it (validation, logging) its stack; the scan is
 * one pass over bytes the parser reads anyway.
 */
export function jsonBody(limit: string): RequestHandler {
  return express.json({
    limit,
    strict: true,
    verify: (_req, _res, buf, encoding) => {
      if (encoding && encoding.toLowerCase() !== 'utf-8' && encoding.toLowerCase() !== 'utf8') {
        throw Object.assign(new Error(`send the body as UTF-8 JSON, not ${encoding}`), { status: 415, type: 'charset.unsupported' });
      }
      if (nestsDeeperThan(buf, MAX_DEPTH)) {
        throw Object.assign(new Error(`the request body nests deeper than ${MAX_DEPTH} levels of objects and arrays`), { status: 400, type: 'entity.too.deep' });
      }
    },
  });
}

/**
 * Runs `parser` (a `jsonBody`) once over a small UTF-8 body held in memory, as the server's
 * warm-up: the parser loads its charset decoders on the first body it reads (~14 ms, ten
 * modules), which the first request would otherwise wait for.
 */
export function rehearseJsonBody(parser: RequestHandler): Promise<void> {
  const body = Buffer.from('{"rehearsal":true}');
  const req = Object.assign(Readable.from([body]), { method: 'POST', url: '/', headers: { 'content-type': 'application/json; charset=utf-8', 'content-length': String(body.length) } });
  return new Promise((resolve, reject) => {
    void parser(req as unknown as Request, {} as Response, (err?: unknown) => (err ? reject(err instanceof Error ? err : new Error(errorMessage(err))) : resolve()));
  });
}

const OPEN_OBJECT = 0x7b;
const OPEN_ARRAY = 0x5b;
const CLOSE_OBJECT = 0x7d;
const CLOSE_ARRAY = 0x5d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * Whether JSON text (UTF-8 bytes) opens more than `max` objects or arrays inside each other.
 * Brackets inside strings do not count; in UTF-8 these ASCII bytes never occur inside a
 * multi-byte character. Malformed text is left for JSON.parse to refuse.
 */
export function nestsDeeperThan(buf: Uint8Array, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < buf.length; i++) {
    const b = buf[i];
    if (inString) {
      if (b === BACKSLASH) i++;
      else if (b === QUOTE) inString = false;
    } else if (b === QUOTE) inString = true;
    else if (b === OPEN_OBJECT || b === OPEN_ARRAY) {
      if (++depth > max) return true;
    } else if (b === CLOSE_OBJECT || b === CLOSE_ARRAY) depth--;
  }
  return false;
}
