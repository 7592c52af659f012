// Starts the real `petstore` binary (PETSTORE_BIN) on a fresh SQLite file with the demo
// data, the way the Go e2e tests do, and stops it at the end. Webhook endpoints may be on
// loopback (--webhooks-allow-private), where the tests' receivers listen.
import { execFile, spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import { promisify } from "node:util";

export interface Server {
  /** `http://127.0.0.1:PORT/v1`, the SDK's baseUrl. */
  baseUrl: string;
  adminKey: string;
  customerKey: string;
  /** Makes another key with `petstore keys create`. */
  createKey(email: string, role: "admin" | "customer"): Promise<string>;
  stop(): Promise<void>;
}

export function petstoreBinary(): string {
  const bin = process.env.PETSTORE_BIN;
  if (!bin) {
    throw new Error(
      "PETSTORE_BIN is not set: these tests run against the real server. Build it with " +
        "`(cd ../.. && go build -o /tmp/petstore-ts/petstore ./cmd/petstore)` and run " +
        "`PETSTORE_BIN=/tmp/petstore-ts/petstore npm test`.",
    );
  }
  return bin;
}

export async function startPetstore(): Promise<Server> {
  const bin = petstoreBinary();
  const dir = await mkdtemp(path.join(tmpdir(), "petstore-ts-"));
  const database = path.join(dir, "petstore.db");
  const createKey = async (email: string, role: "admin" | "customer") => {
    const { stdout } = await promisify(execFile)(bin, ["keys", "create", "--create", "--email", email, "--role", role, "--database", database]);
    return stdout.trim();
  };
  const adminKey = await createKey("admin@example.com", "admin");
  const customerKey = await createKey("customer@example.com", "customer");

  const child = spawn(
    bin,
    [
      "serve", "--addr", "127.0.0.1:0", "--database", database, "--demo", "--no-bootstrap", "--log-level", "warn",
      "--credential-limit", "100", "--webhooks-allow-private",
    ],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  let stderr = "";
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGINT");
      const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
      await exited;
      clearTimeout(timer);
    }
    await rm(dir, { recursive: true, force: true });
  };

  try {
    // The first line says where it listens: "petstore listening on http://127.0.0.1:PORT".
    const origin = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`petstore serve did not say where it listens: ${stderr}`)), 30_000);
      createInterface({ input: child.stdout }).on("line", (line) => {
        const prefix = "petstore listening on ";
        if (line.startsWith(prefix)) {
          clearTimeout(timer);
          resolve(line.slice(prefix.length).trim());
        }
      });
      void exited.then(() => reject(new Error(`petstore serve exited: ${stderr}`)));
    });
    for (const deadline = Date.now() + 10_000; ; ) {
      const ok = await fetch(`${origin}/healthz`).then((r) => r.ok, () => false);
      if (ok) break;
      if (Date.now() > deadline) throw new Error(`${origin}/healthz does not answer 200: ${stderr}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    return { baseUrl: `${origin}/v1`, adminKey, customerKey, createKey, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
