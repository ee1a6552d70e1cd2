/**
 * Typed errors. Every error Mnemograph raises on purpose is a MnemographError with a stable
 * `code`, a `category` that the HTTP layer maps to a status, JSON `details`, and a message
 * that says what went wrong and how to fix it.
 */
export type ErrorCategory = 'user' | 'system' | 'upstream';

export class MnemographError extends Error {
  readonly code: string;
  readonly category: ErrorCategory;
  readonly details: Record<string, unknown>;

  constructor(code: string, category: ErrorCategory, message: string, details: Record<string, unknown> = {}, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
    this.category = category;
    this.details = details;
  }

  toJSON(): { code: string; message: string; details: Record<string, unknown> } {
    return { code: this.code, message: this.message, details: this.details };
  }
}

/** Input that failed validation. Nothing was written. */
export class ValidationError extends MnemographError {
  constructor(message: string, details: Record<string, unknown> = {}) {
    super('VALIDATION_FAILED', 'user', message, details);
  }
}

/** Configuration that cannot work; raised at boot, names the setting and the fix. */
export class ConfigError extends MnemographError {
  constructor(setting: string, message: string, fix: string) {
    super('CONFIG_INVALID', 'user', `${setting}: ${message}. Fix: ${fix}`, { setting, fix });
  }
}

export class NotFoundError extends MnemographError {
  constructor(what: string, id: string) {
    super('NOT_FOUND', 'user', `${what} ${id} was not found`, { what, id });
  }
}

/** A call for a user whose erasure is under way (or who was erased while it ran): 409, nothing written; retry once the erasure has answered. */
export class UserBeingErasedError extends MnemographError {
  constructor(userId: string) {
    super('USER_BEING_ERASED', 'user', `user ${userId} is being erased; nothing was written. Retry once the erasure has finished`, { userId });
  }
}

/** The caller may see the thing but not do this to it (a pool it reads but may not write): 403. */
export class ForbiddenError extends MnemographError {
  constructor(message: string, details: Record<string, unknown> = {}) {
    super('FORBIDDEN', 'user', message, details);
  }
}

/** A store (Neo4j, Postgres, Redis) or an external API is unreachable or failing. */
export class StoreUnavailableError extends MnemographError {
  constructor(store: string, message: string, details: Record<string, unknown> = {}, cause?: unknown) {
    super('STORE_UNAVAILABLE', 'upstream', message, { store, ...details }, { cause });
  }
}

/** The schema in a database does not match what this code expects. */
export class SchemaError extends MnemographError {
  constructor(message: string, details: Record<string, unknown> = {}) {
    super('SCHEMA_MISMATCH', 'system', message, details);
  }
}

/** The local stack (Java, Maven, the Neo4j process, ports) could not be brought up. */
export class StackError extends MnemographError {
  constructor(message: string, details: Record<string, unknown> = {}) {
    super('STACK_FAILED', 'system', message, details);
  }
}

export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
