// Verifying webhook deliveries: `Petstore-Signature: t=<unix seconds>,v1=<hex>[,v1=<hex>…]`,
// each v1 the HMAC-SHA256 of "<t>.<body>" under one valid secret (two while a rotated
// secret overlaps). Web Crypto only, so it runs in Node.js and in browsers alike.
import type { Event } from "./types.js";

/** Why a delivery was not accepted. */
export type WebhookVerificationFailure = "missing_header" | "malformed_header" | "timestamp_out_of_tolerance" | "no_matching_signature";

/**
 * Thrown by `constructEvent` for a delivery it does not accept: answer it with a 400 and do
 * not act on it. Branch on `reason`, or on the subclass.
 */
export class WebhookVerificationError extends Error {
  override readonly name: string = "WebhookVerificationError";
  readonly reason: WebhookVerificationFailure;

  constructor(reason: WebhookVerificationFailure, message: string) {
    super(message);
    this.reason = reason;
  }
}

/** No `Petstore-Signature` header, or one that is not `t=<unix seconds>,v1=<hex>…`. */
export class WebhookHeaderError extends WebhookVerificationError {
  override readonly name = "WebhookHeaderError";
  declare readonly reason: "missing_header" | "malformed_header";

  constructor(reason: "missing_header" | "malformed_header", message: string) {
    super(reason, message);
  }
}

/**
 * The header's `t` is further from now than the tolerance, in the past (a replayed
 * delivery, or a clock that lags) or in the future (a clock that runs ahead).
 */
export class WebhookTimestampError extends WebhookVerificationError {
  override readonly name = "WebhookTimestampError";
  declare readonly reason: "timestamp_out_of_tolerance";
  /** The header's `t`, in Unix seconds. */
  readonly timestamp: number;
  /** Your clock when it was checked, in Unix seconds. */
  readonly now: number;

  constructor(timestamp: number, now: number, toleranceSeconds: number) {
    super(
      "timestamp_out_of_tolerance",
      `petstore: the webhook signature's timestamp ${timestamp} is ${Math.abs(now - timestamp)}s ` +
        `${timestamp < now ? "old" : "ahead of this clock"}, more than the tolerance of ${toleranceSeconds}s`,
    );
    this.timestamp = timestamp;
    this.now = now;
  }
}

/** No `v1` of the header is the signature of this payload under this secret. */
export class WebhookSignatureError extends WebhookVerificationError {
  override readonly name = "WebhookSignatureError";
  declare readonly reason: "no_matching_signature";

  constructor(message: string) {
    super("no_matching_signature", message);
  }
}

export interface ConstructEventOptions {
  /** How far `t` may be from your clock, either way, in seconds (default 300, as the document says). */
  toleranceSeconds?: number;
  /** Your clock, in milliseconds since the epoch like `Date.now` (the default). */
  now?: () => number;
}

/** The default tolerance: 5 minutes either way. */
export const defaultToleranceSeconds = 300;

const encoder = new TextEncoder();

/**
 * Checks a webhook delivery and returns its event; throws a `WebhookVerificationError` for
 * one that must not be trusted. Give it the body exactly as received (the raw bytes, or
 * their text): JSON parsed and serialised again does not verify. It accepts the delivery
 * when the `Petstore-Signature` header's `t` is within `toleranceSeconds` of your clock,
 * either way, and one of its `v1` signatures (there is one per valid secret, two while a
 * rotated secret overlaps) is the HMAC-SHA256 of `"<t>.<body>"` under `secret`, compared in
 * constant time; other schemes (`v0`, a later `v2`) are ignored. A delivery may come more
 * than once: dedupe by the event's `id`.
 *
 * @param payload The request body as received.
 * @param signatureHeader The `Petstore-Signature` header: `headers.get("Petstore-Signature")`
 *   of a fetch `Request`, or `req.headers["petstore-signature"]` of Node's `http` (a list, when
 *   there is one, is read as the header sent that many times, which is refused).
 * @param secret The endpoint's whole secret, `whsec_` included.
 */
export async function constructEvent(
  payload: string | Uint8Array,
  signatureHeader: string | readonly string[] | null | undefined,
  secret: string,
  options: ConstructEventOptions = {},
): Promise<Event> {
  const toleranceSeconds = options.toleranceSeconds ?? defaultToleranceSeconds;
  if (typeof toleranceSeconds !== "number" || !(toleranceSeconds >= 0)) {
    throw new TypeError(`constructEvent: toleranceSeconds must be a number of seconds, 0 or more; got ${String(toleranceSeconds)}`);
  }
  if (typeof secret !== "string" || secret === "") {
    // Most likely an unset environment variable: nothing would ever verify.
    throw new TypeError("constructEvent: secret is empty");
  }
  const header = typeof signatureHeader === "object" && signatureHeader !== null ? signatureHeader.join(",") : signatureHeader;
  const { timestamp, signatures } = parseSignatureHeader(header);

  const now = Math.floor((options.now ?? Date.now)() / 1000);
  if (Math.abs(now - timestamp) > toleranceSeconds) throw new WebhookTimestampError(timestamp, now, toleranceSeconds);

  const body = typeof payload === "string" ? encoder.encode(payload) : payload;
  const prefix = encoder.encode(`${timestamp}.`);
  const signed = new Uint8Array(prefix.length + body.length);
  signed.set(prefix);
  signed.set(body, prefix.length);
  const key = await crypto.subtle.importKey("raw", encoder.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const expected = new Uint8Array(await crypto.subtle.sign("HMAC", key, signed));
  let matched = false;
  for (const signature of signatures) matched = constantTimeEqual(signature, expected) || matched;
  if (!matched) {
    throw new WebhookSignatureError(
      `petstore: no v1 signature of the webhook (of ${signatures.length}) matches the payload under this secret`,
    );
  }

  const text = typeof payload === "string" ? payload : new TextDecoder("utf-8", { fatal: true }).decode(payload);
  const event: unknown = JSON.parse(text);
  if (!isEvent(event)) throw new TypeError("constructEvent: the signed payload is not an event");
  return event;
}

/**
 * The `t` and the `v1` signatures of a `Petstore-Signature` header. A `v1` that is not 64 hex
 * digits is kept as one that cannot match; the header is malformed without exactly one
 * `t` of digits or without any `v1`.
 */
function parseSignatureHeader(header: string | null | undefined): { timestamp: number; signatures: Uint8Array[] } {
  if (header === undefined || header === null || header.trim() === "") {
    throw new WebhookHeaderError("missing_header", "petstore: the webhook has no Petstore-Signature header");
  }
  const malformed = (why: string) =>
    new WebhookHeaderError("malformed_header", `petstore: the Petstore-Signature header ${JSON.stringify(header.slice(0, 300))} ${why}`);
  const timestamps: string[] = [];
  const signatures: Uint8Array[] = [];
  for (const part of header.split(",")) {
    const item = part.trim();
    if (item === "") continue;
    const eq = item.indexOf("=");
    if (eq <= 0) throw malformed("is not a list of key=value");
    const name = item.slice(0, eq);
    const value = item.slice(eq + 1);
    if (name === "t") timestamps.push(value);
    else if (name === "v1") signatures.push(hexBytes(value));
  }
  if (timestamps.length !== 1) throw malformed(timestamps.length === 0 ? "has no t" : "has more than one t");
  const [t = ""] = timestamps;
  if (!/^\d{1,15}$/.test(t)) throw malformed("has a t that is not Unix seconds");
  if (signatures.length === 0) throw malformed("has no v1 signature");
  return { timestamp: Number(t), signatures };
}

/** The bytes of a SHA-256 in hex, or no bytes (which match nothing) for anything else. */
function hexBytes(hex: string): Uint8Array {
  if (!/^[0-9a-fA-F]{64}$/.test(hex)) return new Uint8Array(0);
  const bytes = new Uint8Array(32);
  for (let i = 0; i < 32; i++) bytes[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return bytes;
}

/** Whether a and b are equal, in a time that does not depend on where they differ. */
function constantTimeEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= (a[i] ?? 0) ^ (b[i] ?? 0);
  return diff === 0;
}

function isEvent(value: unknown): value is Event {
  if (typeof value !== "object" || value === null) return false;
  const e = value as Record<string, unknown>;
  return typeof e.id === "string" && typeof e.type === "string" && typeof e.createdAt === "string" && typeof e.data === "object" && e.data !== null;
}
