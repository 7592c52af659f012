// A webhook receiver on loopback for the server tests: it keeps every delivery as it came
// (raw body and signature header) and answers with the status a test sets.
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";

export interface ReceivedDelivery {
  /** The raw body, to verify. */
  body: Buffer;
  /** The `Petstore-Signature` header. */
  signature: string | undefined;
  headers: IncomingHttpHeaders;
  /** The body's `id` and `type`, read without verifying: only to find a delivery. */
  id: string;
  type: string;
}

export interface Receiver {
  /** `http://127.0.0.1:PORT/hook`, for `webhooks.create`. */
  url: string;
  /** The status the next deliveries are answered (204 to start with). */
  status: number;
  /** Every delivery so far, in the order they came. */
  received: ReceivedDelivery[];
  /** The first delivery, received or still to come, that `match` accepts. */
  waitFor(match: (delivery: ReceivedDelivery) => boolean, timeoutMs?: number): Promise<ReceivedDelivery>;
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const waiters = new Set<() => void>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      let parsed: { id?: unknown; type?: unknown } = {};
      try {
        parsed = JSON.parse(body.toString("utf8")) as typeof parsed;
      } catch {
        // kept with an empty id and type
      }
      receiver.received.push({
        body,
        signature: req.headers["petstore-signature"] as string | undefined,
        headers: req.headers,
        id: typeof parsed.id === "string" ? parsed.id : "",
        type: typeof parsed.type === "string" ? parsed.type : "",
      });
      res.writeHead(receiver.status).end();
      for (const wake of waiters) wake();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;

  const receiver: Receiver = {
    url: `http://127.0.0.1:${port}/hook`,
    status: 204,
    received: [],
    waitFor(match, timeoutMs = 20_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const found = receiver.received.find(match);
          if (!found) return;
          waiters.delete(check);
          clearTimeout(timer);
          resolve(found);
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`no matching delivery within ${timeoutMs} ms; received: ${receiver.received.map((d) => `${d.type} ${d.id}`).join(", ")}`));
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  return receiver;
}
