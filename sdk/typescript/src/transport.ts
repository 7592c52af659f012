import type { Middleware } from "openapi-fetch";
import { parseHttpDate, retryAfterSeconds } from "./errors.js";

export type Fetch = (request: Request) => Promise<Response>;

export interface RetryPolicy {
  /** Tries after the first one (0: none). */
  retries: number;
  /** First back-off, doubled on every try, with jitter. */
  baseDelayMs: number;
  /** Longest wait (at most 2^31-1, a timer's longest); a `Retry-After` above it is not waited for (the error is thrown). */
  maxDelayMs: number;
}

/**
 * Wraps `fetch` so that a request that is safe to repeat is tried again after a network
 * error, a 429 or a 503: after `Retry-After` when the answer has it, else after an
 * exponential back-off with jitter. Safe to repeat are GET, HEAD, PUT and DELETE, and a
 * POST with an `Idempotency-Key` (sent again unchanged, so the server answers the first
 * result). The request's `AbortSignal` ends the waiting too.
 */
export function retryingFetch(fetch: Fetch, policy: RetryPolicy): Fetch {
  // A timer waits at most 2^31-1 ms (about 24.8 days); a longer one would fire at once.
  policy = { ...policy, maxDelayMs: Math.min(policy.maxDelayMs, 2 ** 31 - 1) };
  return async (request) => {
    const repeatable = ["GET", "HEAD", "PUT", "DELETE"].includes(request.method) || request.headers.has("Idempotency-Key");
    for (let attempt = 0; ; attempt++) {
      const last = !repeatable || attempt >= policy.retries;
      let response: Response;
      try {
        response = await fetch(last ? request : request.clone());
      } catch (error) {
        if (last || request.signal.aborted) throw error;
        await sleep(backoff(attempt, policy), request.signal);
        continue;
      }
      if (last || (response.status !== 429 && response.status !== 503)) return response;
      const retryAfter = retryAfterSeconds(response.headers);
      const wait = retryAfter === undefined ? backoff(attempt, policy) : retryAfter * 1000;
      if (wait > policy.maxDelayMs) return response;
      await response.body?.cancel();
      await sleep(wait, request.signal);
    }
  };
}

function backoff(attempt: number, { baseDelayMs, maxDelayMs }: RetryPolicy): number {
  const ceiling = Math.min(maxDelayMs, baseDelayMs * 2 ** attempt);
  return ceiling / 2 + Math.random() * (ceiling / 2);
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

/** The target of the first link with relation `rel` in a `Link` header (RFC 8288), as written. */
export function linkTarget(header: string | null, rel: string): string | undefined {
  for (const [, target, params] of (header ?? "").matchAll(/<([^>]*)>([^<]*)/g)) {
    const rels = /;\s*rel\s*=\s*(?:"([^"]*)"|([^\s;,]+))/i.exec(params ?? "");
    if ((rels?.[1] ?? rels?.[2] ?? "").toLowerCase().split(/\s+/).includes(rel)) return target;
  }
  return undefined;
}

/** What a deprecated operation's answer says about it. */
export interface DeprecationNotice {
  /** Method and path template, e.g. `GET /pets/{petId}`. */
  operation: string;
  /** The `Deprecation` header as sent (RFC 9745: `@<unix-seconds>`). */
  deprecation: string;
  /** When the operation stops working (`Sunset`), if said. */
  sunset: Date | undefined;
  /** The absolute URL of its replacement (`Link: <…>; rel="successor-version"`), if said. */
  successor: string | undefined;
}

/** Calls `notify` for every answer that carries a `Deprecation` header. */
export function deprecationMiddleware(notify: (notice: DeprecationNotice) => void): Middleware {
  return {
    onResponse({ request, response, schemaPath }) {
      const deprecation = response.headers.get("Deprecation");
      if (deprecation === null) return;
      const sunset = response.headers.get("Sunset");
      const successor = linkTarget(response.headers.get("Link"), "successor-version");
      notify({
        operation: `${request.method} ${schemaPath}`,
        deprecation,
        // A header that does not parse is left out: it must not fail the call it came with.
        sunset: sunset === null ? undefined : parseHttpDate(sunset.trim()),
        // Resolved against the URL of the request (RFC 8288 §3.2), as a list's next page.
        successor: successor === undefined ? undefined : resolve(successor, response.url || request.url),
      });
    },
  };
}

/** `reference` resolved against `base`, or undefined if that is no URL (`URL.parse` is too new for Node 20.0). */
function resolve(reference: string, base: string): string | undefined {
  try {
    return new URL(reference, base).href;
  } catch {
    return undefined;
  }
}

/** The default deprecation handler: one `console.warn` per operation. */
export function warnOncePerOperation(): (notice: DeprecationNotice) => void {
  const warned = new Set<string>();
  return ({ operation, sunset, successor }) => {
    if (warned.has(operation)) return;
    warned.add(operation);
    console.warn(
      `petstore: ${operation} is deprecated` +
        (sunset ? `; it stops working on ${sunset.toISOString().slice(0, 10)}` : "") +
        (successor ? `; use ${successor} instead` : ""),
    );
  };
}
