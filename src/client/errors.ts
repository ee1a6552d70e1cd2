/** An error answer of the Mnemograph API, with its HTTP status and stable code. */
export class MnemographApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: Record<string, unknown> = {},
    readonly requestId?: string,
  ) {
    super(message);
    this.name = new.target.name;
  }
}
/** 400: the request was invalid; nothing was written. `details.issues` lists the fields. */
export class ValidationFailedError extends MnemographApiError {}
/** 401: missing, unknown or revoked API key. */
export class UnauthorizedError extends MnemographApiError {}
/** 404: the user or object does not exist for this tenant. */
export class NotFoundError extends MnemographApiError {}
/** 429: the key's rate limit was exceeded (after the client's retries). */
export class RateLimitedError extends MnemographApiError {}
/** 503: a store was unavailable (after the client's retries). */
export class UnavailableError extends MnemographApiError {}
/** The server could not be reached at all. */
export class ConnectionError extends MnemographApiError {}

export function errorFor(status: number, code: string, message: string, details: Record<string, unknown>, requestId?: string): MnemographApiError {
  const Cls =
    status === 400
      ? ValidationFailedError
      : status === 401
        ? UnauthorizedError
        : status === 404
          ? NotFoundError
          : status === 429
            ? RateLimitedError
            : status === 503
              ? UnavailableError
              : MnemographApiError;
  return new Cls(status, code, message, details, requestId);
}
