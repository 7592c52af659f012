import type { components } from "./schema.js";
import type { ErrorCode, ErrorDetail, Scope } from "./types.js";

/**
 * Thrown for every answer that is not 2xx. Branch on `code` (or on `status` for a code you
 * do not know); quote `requestId` to the operator.
 */
export class PetstoreError extends Error {
  override readonly name = "PetstoreError";
  /** The `code` of the error body; empty when the answer is not a Pet Store error (say, a proxy's page). */
  readonly code: ErrorCode;
  /** The HTTP status. */
  readonly status: number;
  /** What is wrong with which field; empty unless `validation_failed`. */
  readonly details: readonly ErrorDetail[];
  /** The `X-Request-Id` of the answer. */
  readonly requestId: string | undefined;
  /** Seconds to wait before trying again (`Retry-After`), on 429 and 503. */
  readonly retryAfter: number | undefined;
  /**
   * The scope the call needed and the key lacks, on `insufficient_scope` (from
   * `WWW-Authenticate: Bearer error="insufficient_scope", scope="…"`): make a key with it,
   * or use one that has it.
   */
  readonly scope: Scope | undefined;

  constructor(init: {
    code: ErrorCode;
    status: number;
    message: string;
    details?: readonly ErrorDetail[];
    requestId?: string | undefined;
    retryAfter?: number | undefined;
    scope?: Scope | undefined;
  }) {
    super(init.message);
    this.code = init.code;
    this.status = init.status;
    this.details = init.details ?? [];
    this.requestId = init.requestId;
    this.retryAfter = init.retryAfter;
    this.scope = init.scope;
  }

  /**
   * `PetstoreError: not_found (404): No pet 7.`; for an answer that is not a Pet Store error,
   * whose message starts with the HTTP status, `PetstoreError: HTTP 502 Bad Gateway: …`.
   */
  override toString(): string {
    return this.code ? `${this.name}: ${this.code} (${this.status}): ${this.message}` : `${this.name}: ${this.message}`;
  }

  /** The error an answer stands for; `body` is its parsed JSON (or its text, if not JSON). */
  static fromResponse(response: Response, body: unknown): PetstoreError {
    const known = isErrorBody(body);
    return new PetstoreError({
      code: known ? body.code : "",
      status: response.status,
      message: known
        ? body.message
        : `HTTP ${response.status}${response.statusText ? ` ${response.statusText}` : ""}` +
          (typeof body === "string" && body.trim() ? `: ${body.trim().slice(0, 200)}` : ""),
      details: known ? (body.details ?? []) : [],
      requestId: response.headers.get("X-Request-Id") ?? undefined,
      retryAfter: retryAfterSeconds(response.headers),
      scope: bearerParam(response.headers.get("WWW-Authenticate"), "scope"),
    });
  }
}

/** The characters of a token (RFC 9110 §5.6.2), and "/" of a token68. */
const token = /^[!#$%&'*+\-./^_`|~0-9A-Za-z]+/;

/**
 * The parameter `name` of the Bearer challenge in a `WWW-Authenticate` value, or undefined.
 * The value may hold several challenges (RFC 9110 §11.6.1; fetch joins repeated headers
 * with ", "), and a quoted parameter may hold commas and escapes:
 * `Basic realm="a, b", Bearer error="insufficient_scope", scope="pets:write"`.
 */
function bearerParam(header: string | null, name: string): string | undefined {
  let rest = header ?? "";
  let scheme = "";
  for (;;) {
    rest = rest.replace(/^[ \t,]+/, "");
    const word = token.exec(rest)?.[0];
    if (word === undefined) return undefined; // the end, or not the header's grammar
    rest = rest.slice(word.length).replace(/^[ \t]+/, "");
    const afterEquals = rest.startsWith("=") ? rest.slice(1).replace(/^[ \t]+/, "") : undefined;
    if (afterEquals !== undefined && (afterEquals.startsWith('"') || token.test(afterEquals))) {
      // name=value, of the current challenge
      const value = paramValue(afterEquals);
      if (value === undefined) return undefined;
      if (scheme.toLowerCase() === "bearer" && word.toLowerCase() === name.toLowerCase()) return value.value;
      rest = value.rest;
    } else if (rest.startsWith("=")) {
      rest = rest.replace(/^=+/, ""); // the padding of a token68, such as Basic's credentials
    } else {
      scheme = word; // an auth-scheme starts a challenge (or a token68 without padding)
    }
  }
}

/** A token or a quoted string (RFC 9110 §5.6.4) at the start of `s`, unquoted, and what follows it. */
function paramValue(s: string): { value: string; rest: string } | undefined {
  if (!s.startsWith('"')) {
    const value = token.exec(s)?.[0] ?? "";
    return { value, rest: s.slice(value.length) };
  }
  const quoted = /^"((?:[^"\\]|\\.)*)"/.exec(s);
  if (!quoted) return undefined; // no closing quote
  return { value: (quoted[1] ?? "").replace(/\\(.)/g, "$1"), rest: s.slice(quoted[0].length) };
}

function isErrorBody(body: unknown): body is components["schemas"]["Error"] {
  if (typeof body !== "object" || body === null) return false;
  const b = body as Record<string, unknown>;
  return typeof b.code === "string" && typeof b.message === "string" && (b.details === undefined || Array.isArray(b.details));
}

/**
 * `Retry-After` in seconds (given as delay-seconds or as an HTTP-date, RFC 9110 §10.2.3), if
 * the answer has one; any other value (`-5`, `1.5`) counts as none.
 */
export function retryAfterSeconds(headers: Headers): number | undefined {
  const value = headers.get("Retry-After")?.trim();
  if (!value) return undefined;
  if (/^\d+$/.test(value)) return Number(value);
  const date = parseHttpDate(value);
  return date === undefined ? undefined : Math.max(0, Math.ceil((date.getTime() - Date.now()) / 1000));
}

const day = "(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)";
const month = "(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)";
const time = "\\d{2}:\\d{2}:\\d{2}";
/** The three forms of an HTTP-date (RFC 9110 §5.6.7): IMF-fixdate, obsolete RFC 850, asctime. */
const httpDateForms = [
  new RegExp(`^${day}, \\d{2} ${month} \\d{4} ${time} GMT$`),
  new RegExp(`^${day}[a-z]*, \\d{2}-${month}-\\d{2} ${time} GMT$`),
  new RegExp(`^${day} ${month} [ \\d]\\d ${time} \\d{4}$`),
];

/**
 * An HTTP-date, or undefined for anything else: `Date.parse` alone takes `-5` or `Foo 12` for
 * a date of 2001, and asctime (which has no zone, but is GMT) for local time.
 */
export function parseHttpDate(value: string): Date | undefined {
  const form = httpDateForms.findIndex((re) => re.test(value));
  if (form === -1) return undefined;
  const date = new Date(form === 2 ? `${value} GMT` : value);
  return Number.isNaN(date.getTime()) ? undefined : date;
}
