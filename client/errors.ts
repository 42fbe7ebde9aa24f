// The one error class the SDK raises for a failed request.

export class FlockError extends Error {
  readonly status: number;
  readonly code: string;
  readonly retryAfter: number | undefined;
  readonly body: unknown;

  constructor(status: number, code: string, message: string, retryAfter?: number, body?: unknown) {
    super(message);
    this.name = "FlockError";
    this.status = status;
    this.code = code;
    this.retryAfter = retryAfter;
    this.body = body;
  }
}

/** A paid agent asked for payment and the client has no account (or the cap forbids paying). */
export class PaymentRequiredError extends FlockError {
  readonly requirements: unknown;

  constructor(message: string, requirements: unknown, body?: unknown) {
    super(402, "payment_required", message, undefined, body);
    this.name = "PaymentRequiredError";
    this.requirements = requirements;
  }
}
