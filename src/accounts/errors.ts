/** A field of an input is wrong: the management API answers 400 naming it, the CLI prints it. */
export class ValidationError extends Error {
  constructor(readonly field: string, message: string) {
    super(`${field}: ${message}`);
    this.name = 'ValidationError';
  }
}

/** The thing does not exist, or belongs to another account (which must look the same: never visible). */
export class NotFoundError extends Error {
  constructor(readonly what: string) {
    super(`${what} not found`);
    this.name = 'NotFoundError';
  }
}

/** Too many of something in too short a time: the management API answers 429 with Retry-After. */
export class TooManyError extends Error {
  constructor(readonly retryAfterSeconds: number, message: string) {
    super(message);
    this.name = 'TooManyError';
  }
}
