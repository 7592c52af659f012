// Every operation of the document has an SDK method: the operations are read from
// api/openapi.yaml, and each one's method is called here against a recording fetch, which
// checks that it sends that operation's method and path. An operation added to the
// document fails this test until the SDK has a method for it (and this table names it).
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { parse } from "yaml";
import { createPetstore, type Petstore } from "@acme-pets/petstore";

interface Operation {
  method: string;
  path: string;
}

/** Every operation of the document by operationId. */
function documentOperations(): Map<string, Operation> {
  const document = parse(readFileSync(new URL("../../../api/openapi.yaml", import.meta.url), "utf8")) as {
    paths: Record<string, Record<string, { operationId?: string } | undefined>>;
  };
  const operations = new Map<string, Operation>();
  for (const [path, item] of Object.entries(document.paths)) {
    for (const method of ["get", "put", "post", "delete", "options", "head", "patch", "trace"]) {
      const operationId = item[method]?.operationId;
      if (operationId === undefined) continue;
      assert.ok(!operations.has(operationId), `operationId ${operationId} is used twice`);
      operations.set(operationId, { method: method.toUpperCase(), path });
    }
  }
  return operations;
}

/** The first page (one request) of a list. */
const first = (items: AsyncIterator<unknown>) => items.next();

/** Opens the event stream once: a reconnection ends it. */
function onceStream(c: Petstore, query: Parameters<Petstore["events"]["stream"]>[0]) {
  const stop = new AbortController();
  return first(c.events.stream(query, { signal: stop.signal, onReconnect: () => stop.abort() }));
}

/**
 * Each operation's SDK calls (a list's iterator and its `pages`). They may use only the
 * SDK's own methods: `raw` is refused.
 */
const sdkCalls: Record<string, ((client: Petstore) => Promise<unknown>)[]> = {
  createAccount: [(c) => c.accounts.create({ email: "ada@example.com", password: "correct horse battery" })],
  getCurrentAccount: [(c) => c.accounts.me()],
  listAccounts: [(c) => first(c.accounts.list()), (c) => first(c.accounts.pages())],
  updateAccount: [(c) => c.accounts.update(2, { disabled: true })],
  createSession: [(c) => c.sessions.create({ email: "ada@example.com", password: "correct horse battery" })],
  createInvitation: [(c) => c.invitations.create({ email: "clerk@example.com", role: "admin" })],
  acceptInvitation: [(c) => c.invitations.accept({ token: "psi_x", password: "correct horse battery" })],
  requestPasswordReset: [(c) => c.passwordResets.request("ada@example.com")],
  resetPassword: [(c) => c.passwordResets.confirm({ token: "psr_x", password: "correct horse battery" })],
  createApiKey: [(c) => c.apiKeys.create({ name: "laptop" })],
  listApiKeys: [(c) => first(c.apiKeys.list()), (c) => first(c.apiKeys.pages())],
  revokeApiKey: [(c) => c.apiKeys.revoke(1)],
  sendMessage: [(c) => c.messages.send({ message: "hi" })],
  getMessage: [(c) => c.messages.get("msg_1")],
  listPets: [(c) => first(c.pets.list()), (c) => first(c.pets.pages())],
  createPet: [(c) => c.pets.create({ name: "Rex", categoryId: 1 })],
  getPetById: [(c) => c.pets.get(1)],
  replacePet: [(c) => c.pets.replace(1, { name: "Rex", categoryId: 1 })],
  updatePet: [(c) => c.pets.update(1, { name: "Rex" })],
  deletePet: [(c) => c.pets.delete(1)],
  uploadPetPhoto: [
    (c) => c.pets.uploadPhoto(1, new Uint8Array([0xff, 0xd8, 0xff, 0xe0])),
    (c) => c.pets.uploadPhoto(1, new Blob([new Uint8Array([1, 2, 3])], { type: "image/webp" })),
    (c) => c.pets.uploadPhoto(1, new ArrayBuffer(8), "image/png"),
  ],
  reorderPetPhotos: [(c) => c.pets.reorderPhotos(1, ["ph_2ocjcdj23o2hkliy2weuirxv2a", "ph_2ocjcdeuzxjv5uwnhsx2wqqvyd"])],
  deletePetPhoto: [(c) => c.pets.deletePhoto(1, "ph_2ocjcdj23o2hkliy2weuirxv2a")],
  getPhoto: [(c) => c.pets.getPhoto("ph_2ocjcdj23o2hkliy2weuirxv2a", "thumb")],
  listCategories: [(c) => first(c.categories.list()), (c) => first(c.categories.pages())],
  createCategory: [(c) => c.categories.create({ name: "Dogs" })],
  getCategory: [(c) => c.categories.get(1)],
  replaceCategory: [(c) => c.categories.replace(1, { name: "Dogs" })],
  deleteCategory: [(c) => c.categories.delete(1)],
  listInventory: [(c) => first(c.inventory.list()), (c) => first(c.inventory.pages())],
  getInventory: [(c) => c.inventory.get(1)],
  setInventory: [(c) => c.inventory.set(1, { quantity: 1 })],
  listOrders: [(c) => first(c.orders.list()), (c) => first(c.orders.pages())],
  placeOrder: [(c) => c.orders.place({ petId: 1, quantity: 1 })],
  getOrder: [(c) => c.orders.get(1)],
  updateOrder: [(c) => c.orders.update(1, { complete: true })],
  cancelOrder: [(c) => c.orders.cancel(1)],
  getSalesReport: [(c) => c.sales.report(), (c) => c.sales.report({ from: "2026-11-01", to: "2026-11-30", groupBy: "pet", limit: 10 })],
  listWebhooks: [(c) => first(c.webhooks.list()), (c) => first(c.webhooks.pages())],
  createWebhook: [(c) => c.webhooks.create({ url: "https://shop.example.com/hook", events: ["*"] })],
  getWebhook: [(c) => c.webhooks.get(1)],
  updateWebhook: [(c) => c.webhooks.update(1, { enabled: true })],
  deleteWebhook: [(c) => c.webhooks.delete(1)],
  rotateWebhookSecret: [(c) => c.webhooks.rotateSecret(1), (c) => c.webhooks.rotateSecret(1, { overlapSeconds: 0 })],
  sendTestEvent: [(c) => c.webhooks.sendTest(1)],
  listDeliveries: [(c) => first(c.deliveries.list(1)), (c) => first(c.deliveries.pages(1))],
  retryDelivery: [(c) => c.deliveries.retry(1, 2)],
  listEvents: [(c) => first(c.events.list()), (c) => first(c.events.pages())],
  getEvent: [(c) => c.events.get("evt_mfrggzdfmztwq2lknnwg23tpob")],
  // The stub's answer ends at once, which a stream takes for a dropped connection: it stops
  // there rather than reconnect.
  streamEvents: [(c) => onceStream(c, {}), (c) => onceStream(c, { type: "order.placed", lastEventId: "evt_mfrggzdfmztwq2lknnwg23tpob" })],
};

/** Whether `pathname` (with the /v1 of the base URL) is an instance of the path template. */
function matches(template: string, pathname: string): boolean {
  const pattern = template.replace(/[.*+?^$()|[\]\\]/g, "\\$&").replace(/\{[^}/]+\}/g, "[^/]+");
  return new RegExp(`^/v1${pattern}$`).test(pathname);
}

test("every operation of the document has an SDK method, which sends that operation", async () => {
  const operations = documentOperations();
  assert.ok(operations.size > 0, "no operations read from the document");
  const missing = [...operations].filter(([id]) => !(id in sdkCalls)).map(([id, { method, path }]) => `${id} (${method} ${path})`);
  assert.deepEqual(missing, [], `operations of the document without an SDK method: ${missing.join(", ")}`);
  const unknown = Object.keys(sdkCalls).filter((id) => !operations.has(id));
  assert.deepEqual(unknown, [], "operations named here that the document no longer has");

  const used = new Set<string>(); // the SDK methods the table calls, as "group.method"
  for (const [operationId, calls] of Object.entries(sdkCalls)) {
    const operation = operations.get(operationId);
    assert.ok(operation);
    for (const call of calls) {
      const sent: string[] = [];
      const client = createPetstore({
        baseUrl: "http://petstore.invalid/v1",
        apiKey: "psk_test",
        retries: 0,
        onDeprecation: () => {},
        fetch: async (request) => {
          sent.push(`${request.method} ${new URL(request.url).pathname}`);
          return new Response("[]", { status: 200, headers: { "Content-Type": "application/json" } });
        },
      });
      await call(recording(client, used));
      assert.equal(sent.length, 1, `${operationId}: ${call.toString()} sent ${sent.join(", ") || "nothing"}`);
      const [method, pathname = ""] = (sent[0] ?? "").split(" ");
      assert.ok(
        method === operation.method && matches(operation.path, pathname),
        `${operationId} is ${operation.method} ${operation.path}, but ${call.toString()} sent ${sent[0]}`,
      );
    }
  }

  // And every method of the SDK is some operation's.
  const client = createPetstore({ baseUrl: "http://petstore.invalid/v1" });
  const methods = Object.entries(client)
    .filter(([group]) => group !== "raw")
    .flatMap(([group, calls]) => Object.keys(calls as object).map((name) => `${group}.${name}`));
  assert.deepEqual(
    methods.filter((m) => !used.has(m)),
    [],
    "SDK methods that no operation of the table calls",
  );
});

/** The client, noting every "group.method" called through it; `raw` is refused. */
function recording(client: Petstore, used: Set<string>): Petstore {
  return new Proxy(client, {
    get(target, group, receiver) {
      assert.notEqual(group, "raw", "call the SDK's own method, not raw");
      const calls: unknown = Reflect.get(target, group, receiver);
      if (typeof calls !== "object" || calls === null) return calls;
      return new Proxy(calls, {
        get(methods, name, r) {
          used.add(`${String(group)}.${String(name)}`);
          return Reflect.get(methods, name, r);
        },
      });
    },
  });
}
