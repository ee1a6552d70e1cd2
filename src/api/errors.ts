import { MnemographError, errorMessage } from '../errors';
import { isPgUnavailable } from '../infra/postgres';

/** An error raised by the HTTP layer itself (auth, limits, unknown routes, bad JSON). */
export class HttpError extends MnemographError {
  constructor(
    readonly status: number,
    code: string,
    message: string,
    details: Record<string, unknown> = {},
  ) {
    super(code, 'user', message, details);
  }
}

interface ErrorBody {
  error: { code: string; message: string; details: Record<string, unknown>; requestId?: string };
}

/** Codes of user errors that are not plain validation failures. */
const STATUS_BY_CODE: Record<string, number> = {
  NOT_FOUND: 404,
  CONFLICT: 409,
  FORBIDDEN: 403,
  USER_BEING_ERASED: 409,
};

/** Error codes of node:zlib's decoders (gzip and deflate: Z_*; brotli: ERR__ERROR_* and ERR_BROTLI_*; zstd). */
const DECODER_ERROR = /^(Z_|ERR__ERROR_|ERR_BROTLI|ERR_ZSTD)/;

/**
 * The one place errors become HTTP responses. User errors are 4xx (never 500), store and
 * upstream outages 503, our own bugs 500 with a generic message (the log has the rest).
 * Body-parser errors (bad JSON, too large, wrong charset) arrive as plain errors with a
 * `type` and `status` and are mapped here too.
 */
export function toHttpError(err: unknown, requestId: string): { status: number; body: ErrorBody; internal: boolean } {
  const body = (code: string, message: string, details: Record<string, unknown> = {}): ErrorBody => ({ error: { code, message, details, requestId } });
  if (err instanceof HttpError) return { status: err.status, body: body(err.code, err.message, err.details), internal: false };
  if (err instanceof MnemographError) {
    if (err.category === 'user') return { status: STATUS_BY_CODE[err.code] ?? 400, body: body(err.code, err.message, err.details), internal: false };
    if (err.category === 'upstream') return { status: 503, body: body(err.code, err.message, { store: err.details.store }), internal: false };
    return { status: 500, body: body(err.code, 'internal error; see the server log for this request id'), internal: true };
  }
  const parser = err as { type?: string; status?: number; expose?: boolean; code?: unknown };
  if (typeof parser.status === 'number' && parser.status >= 400 && parser.status < 500 && typeof parser.code === 'string' && DECODER_ERROR.test(parser.code)) {
    // zlib refused the body: it is not what its Content-Encoding says (a plain body sent as gzip or br).
    return {
      status: 400,
      body: body('INVALID_CONTENT_ENCODING', `the request body could not be decoded as its Content-Encoding says (${errorMessage(err)}); send it plain or correctly compressed`),
      internal: false,
    };
  }
  if (typeof parser.type === 'string' && typeof parser.status === 'number' && parser.status >= 400 && parser.status < 500) {
    const code =
      parser.type === 'entity.parse.failed'
        ? 'INVALID_JSON'
        : parser.type === 'entity.too.large'
          ? 'PAYLOAD_TOO_LARGE'
          : parser.type === 'entity.too.deep'
            ? 'BODY_TOO_DEEP'
            : parser.status === 415
              ? 'UNSUPPORTED_MEDIA_TYPE'
              : 'BAD_REQUEST';
    const message =
      code === 'INVALID_JSON'
        ? `the request body is not valid JSON (${errorMessage(err)})`
        : code === 'PAYLOAD_TOO_LARGE'
          ? 'the request body is larger than API_BODY_LIMIT allows; split it into several requests'
          : errorMessage(err);
    return { status: parser.status, body: body(code, message), internal: false };
  }
  // A driver error that reached here untyped (a query on a checked-out pg client) still says when the store is away.
  if (isPgUnavailable(err))
    return { status: 503, body: body('STORE_UNAVAILABLE', `PostgreSQL is unavailable (${errorMessage(err)}); retry after the Retry-After header`, { store: 'postgres' }), internal: false };
  if (err instanceof URIError) return { status: 400, body: body('BAD_REQUEST', 'the URL is not correctly percent-encoded'), internal: false };
  return { status: 500, body: body('INTERNAL', 'internal error; see the server log for this request id'), internal: true };
}
