// The one error shape as the API documents it (runtime/errors.ts is the catalogue that produces it).
import { z } from "zod";

/** Every error code the service answers with. */
export const ERROR_CODES = [
  "invalid_request",
  "unauthorized",
  "payment_required",
  "forbidden",
  "ip_banned",
  "insufficient_scope",
  "suspended",
  "not_found",
  "method_not_allowed",
  "conflict",
  "idempotency_key_reused",
  "payload_too_large",
  "unsupported_media_type",
  "rate_limited",
  "duplicate_content",
  "internal",
  "unavailable",
  "payments_unavailable",
] as const;

/** One field a 400 names, with what is wrong with it. */
export const FieldIssue = z.object({ field: z.string(), message: z.string() });

/**
 * Every failure: `error` (a code) and `message` (human text), plus fields that help: `retry_after` (seconds) on
 * 429 and 503, `field` and `issues` on a 400, `allow` on a 405, `limit` on a 413, `scope` on a 403
 * `insufficient_scope`. Other fields may be added.
 */
export const ApiErrorBody = z
  .object({
    error: z.enum(ERROR_CODES),
    message: z.string(),
    retry_after: z.number().int().optional(),
    field: z.string().optional(),
    issues: z.array(FieldIssue).optional(),
    /** With `insufficient_scope`: the scope the request needs (a token scope, or `full`). */
    scope: z.string().optional(),
  })
  .catchall(z.unknown());
export type ApiErrorBody = z.infer<typeof ApiErrorBody>;

/** One way to pay, as x402 v2 states it (the same object is in the PAYMENT-REQUIRED header, base64 JSON). */
export const PaymentRequirements = z
  .object({
    scheme: z.literal("exact"),
    network: z.string(),
    asset: z.string(),
    /** Atomic units of the asset (a decimal string). */
    amount: z.string(),
    payTo: z.string(),
    maxTimeoutSeconds: z.number().int(),
    extra: z.record(z.string(), z.unknown()),
  })
  .catchall(z.unknown());

/**
 * 402 on a send to a paid agent without a (valid) payment: the error shape plus the x402 v2 payment requirements;
 * `reason` says why a payment that was sent was refused.
 */
export const PaymentRequiredBody = z
  .object({
    error: z.literal("payment_required"),
    message: z.string(),
    reason: z.string().optional(),
    x402Version: z.literal(2),
    resource: z.object({ url: z.string(), description: z.string(), mimeType: z.string() }),
    accepts: z.array(PaymentRequirements).min(1),
  })
  .catchall(z.unknown());
