import { PetstoreError } from "./errors.js";
import type { Event, StreamEventsQuery } from "./types.js";

/** Options of `events.stream`. */
export interface StreamOptions {
  /** Ends the stream: the iterator returns (no error). */
  signal?: AbortSignal;
  /**
   * How long the stream may send nothing, not even its heartbeat (every 15 s), before the
   * connection is taken for dead and opened again; default 45 000 ms.
   */
  idleMs?: number;
  /** Called on each reconnection, with why the connection ended (for logs and tests). */
  onReconnect?: (reason: unknown) => void;
  /**
   * Called each time a connection is open (the service answered 200): from then on no
   * event is missed. A screen that loaded a list before can load it again then.
   */
  onOpen?: () => void;
}

/** Opens the stream once, after `lastEventId` when given; the answer of `GET /events/stream`. */
export type OpenStream = (lastEventId: string | undefined, signal: AbortSignal) => Promise<{ response: Response; error?: unknown }>;

const maxBackoffMs = 30_000;

/** Whether a stream refused with `status` may be opened again: 429, 502, 503, 504. */
function reconnectable(status: number): boolean {
  return status === 429 || status === 502 || status === 503 || status === 504;
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
  });
}

/**
 * The live events of `GET /events/stream` (Server-Sent Events), typed. A dropped
 * connection is opened again with the id of the last event yielded (`Last-Event-ID`),
 * so every event comes once, in order. Network failures and answers of 429, 502, 503
 * and 504 reconnect (waiting longer after each failure in a row, up to 30 s); any other
 * answer throws a `PetstoreError` (401 for a revoked key, 404 for a `lastEventId` past
 * the 30 days of the feed).
 */
export async function* streamEvents(open: OpenStream, query: StreamEventsQuery, options: StreamOptions = {}): AsyncGenerator<Event, void, undefined> {
  const outer = options.signal ?? new AbortController().signal;
  const idleMs = options.idleMs ?? 45_000;
  let last = query.lastEventId;
  let waitMs = 1000;
  while (!outer.aborted) {
    const connection = new AbortController();
    const abort = () => connection.abort(outer.reason);
    outer.addEventListener("abort", abort, { once: true });
    let idle: ReturnType<typeof setTimeout> | undefined;
    const watch = () => {
      clearTimeout(idle);
      idle = setTimeout(() => connection.abort(new Error("petstore: the event stream was silent too long")), idleMs);
    };
    let reason: unknown;
    try {
      const { response, error } = await open(last, connection.signal);
      if (!response.ok) {
        const failure = PetstoreError.fromResponse(response, error);
        if (!reconnectable(response.status)) throw failure;
        reason = failure;
      } else if (response.body) {
        options.onOpen?.();
        watch();
        const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
        let buffered = "";
        try {
          for (;;) {
            const { value, done } = await reader.read();
            if (done) break;
            watch();
            buffered += value.replace(/\r\n?/g, "\n");
            for (let end = buffered.indexOf("\n\n"); end >= 0; end = buffered.indexOf("\n\n")) {
              const frame = buffered.slice(0, end);
              buffered = buffered.slice(end + 2);
              const data = frame
                .split("\n")
                .filter((line) => line.startsWith("data:"))
                .map((line) => line.slice(5).replace(/^ /, ""))
                .join("\n");
              if (data === "") continue; // a comment: the opening or a heartbeat
              const event = JSON.parse(data) as Event;
              last = event.id;
              waitMs = 1000; // it worked: the back-off starts again
              yield event;
            }
          }
        } finally {
          await reader.cancel().catch(() => {});
        }
        reason = new Error("petstore: the service ended the event stream");
      }
    } catch (err) {
      if (err instanceof PetstoreError) throw err;
      if (outer.aborted) return;
      reason = err;
    } finally {
      clearTimeout(idle);
      outer.removeEventListener("abort", abort);
      connection.abort();
    }
    if (outer.aborted) return;
    options.onReconnect?.(reason);
    await sleep(waitMs, outer);
    waitMs = Math.min(2 * waitMs, maxBackoffMs);
  }
}
