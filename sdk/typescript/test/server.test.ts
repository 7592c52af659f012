// The SDK against the real server (PETSTORE_BIN): the README's walk-through, an admin's
// day, errors, every list, the deprecated call, and webhooks: endpoints, deliveries to a
// receiver on loopback checked with constructEvent, and the event feed.
import assert from "node:assert/strict";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, test } from "node:test";
import {
  basicAuth,
  constructEvent,
  createPetstore,
  PetstoreError,
  WebhookSignatureError,
  WebhookVerificationError,
  type DeprecationNotice,
  type Event,
  type Petstore,
} from "@acme-pets/petstore";
import { startPetstore, type Server } from "./harness.js";
import { startReceiver } from "./receiver.js";

let server: Server;
let admin: Petstore;
let customer: Petstore;

before(async () => {
  server = await startPetstore();
  admin = createPetstore({ baseUrl: server.baseUrl, apiKey: server.adminKey });
  customer = createPetstore({ baseUrl: server.baseUrl, apiKey: server.customerKey });
});
after(async () => {
  await server?.stop();
});

/** Every item of a list, all pages. */
async function all<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}

/** The error a call failed with (the test fails if it did not). */
async function failure(call: Promise<unknown>): Promise<unknown> {
  return call.then(
    (value) => assert.fail(`expected an error, got ${JSON.stringify(value)}`),
    (error: unknown) => error,
  );
}

/** Asks `probe` again until it answers something `done` accepts, and returns that. */
async function eventually<T>(probe: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (done(value)) return value;
    if (Date.now() > deadline) assert.fail(`still not done after ${timeoutMs} ms: ${JSON.stringify(value)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

test("walk-through: sign up, key, message, pages, an idempotent order, a refused one", async () => {
  const baseUrl = server.baseUrl;
  // --- walk-through start (what a user writes) ---
  const email = "ada@example.com";
  const password = "correct horse battery";
  const petstore = createPetstore({ baseUrl });
  await petstore.accounts.create({ email, password });
  const { key } = await petstore.apiKeys.create({ name: "laptop" }, { auth: basicAuth(email, password) });

  const client = createPetstore({ baseUrl, apiKey: key });
  const message = await client.messages.send({ message: "Hello, pet store!" });

  const available: string[] = [];
  for await (const pet of client.pets.list({ status: "available", limit: 2 })) {
    available.push(pet.name);
  }

  const idempotencyKey = crypto.randomUUID();
  const order = await client.orders.place({ petId: 1, quantity: 2 }, { idempotencyKey });
  const again = await client.orders.place({ petId: 1, quantity: 2 }, { idempotencyKey });

  let refused: PetstoreError | undefined;
  try {
    await client.orders.place({ petId: 1, quantity: 50 });
  } catch (error) {
    if (!(error instanceof PetstoreError) || error.code !== "insufficient_stock") throw error;
    refused = error;
  }
  // --- walk-through end ---

  assert.match(key, /^psk_/);
  assert.equal(message.status, "queued");
  assert.deepEqual(available, ["Rex", "Bella", "Luna", "Milo", "Kiwi"]);
  assert.deepEqual(again, order);
  assert.deepEqual(
    (await all(client.orders.list())).map((o) => o.id),
    [order.id],
  );
  assert.equal((await client.inventory.get(1)).quantity, 3);
  assert.ok(refused);
  assert.equal(refused.status, 409);
  assert.equal(typeof refused.requestId, "string");
  assert.equal((await client.messages.get(message.id)).message, "Hello, pet store!");
});

test("admin: a category, a pet in it, its price and stock, changes, an order completed and one cancelled, the sales", async () => {
  const reptiles = await admin.categories.create({ name: "Reptiles", description: "Cold-blooded friends." });
  const fido = await admin.pets.create({ name: "Fido", categoryId: reptiles.id, price: 1250 });
  assert.equal(fido.status, "available");
  assert.equal(fido.price, 1250);
  assert.equal(fido.currency, "EUR");
  assert.deepEqual(await admin.inventory.set(fido.id, { quantity: 12 }), { petId: fido.id, quantity: 12, status: "available" });
  assert.deepEqual(await all(customer.pets.list({ categoryId: reptiles.id })), [{ ...fido, stock: 12 }]); // a pet's answer carries its stock

  assert.equal((await admin.pets.update(fido.id, { name: "Fido II" })).name, "Fido II");
  const replaced = await admin.pets.replace(fido.id, { name: "Fido", categoryId: reptiles.id });
  assert.equal(replaced.name, "Fido");
  assert.equal(replaced.price, 1250, "a replacement without a price keeps it");
  const renamed = await admin.categories.replace(reptiles.id, { name: "Reptiles & co" });
  assert.equal(renamed.description, undefined);
  assert.deepEqual(await customer.categories.get(reptiles.id), renamed);

  const kept = await customer.orders.place({ petId: fido.id, quantity: 2 });
  assert.equal(kept.status, "placed");
  assert.deepEqual([kept.unitPrice, kept.total, kept.currency, kept.petName], [1250, 2500, "EUR", "Fido"]);
  assert.ok(!Number.isNaN(Date.parse(kept.createdAt)));
  const dropped = await customer.orders.place({ petId: fido.id, quantity: 10 });
  assert.equal((await customer.inventory.get(fido.id)).status, "pending");
  // A new price applies to later orders: the placed ones keep theirs.
  await admin.pets.update(fido.id, { price: 1500 });
  const shipDate = "2026-12-24T10:00:00Z";
  const completed = await admin.orders.update(kept.id, { complete: true, shipDate });
  assert.ok(completed.completedAt !== undefined);
  assert.deepEqual(completed, { ...kept, complete: true, shipDate, status: "completed", completedAt: completed.completedAt });
  // Cancelling keeps the order; cancelling it again changes nothing.
  await customer.orders.cancel(dropped.id);
  await customer.orders.cancel(dropped.id);
  const cancelled = await customer.orders.get(dropped.id);
  assert.equal(cancelled.status, "cancelled");
  assert.ok(cancelled.cancelledAt !== undefined);
  assert.deepEqual(await customer.inventory.get(fido.id), { petId: fido.id, quantity: 10, status: "available" });
  assert.deepEqual(
    (await all(admin.orders.list({ complete: true, limit: 1 }))).map((o) => o.id),
    [kept.id],
  );
  assert.deepEqual(
    (await all(customer.orders.list({ status: "cancelled" }))).map((o) => o.id),
    [dropped.id],
  );
  assert.deepEqual(
    (await all(customer.orders.list({ sort: "oldest" }))).filter((o) => o.petId === fido.id).map((o) => o.id),
    [kept.id, dropped.id],
  );

  // The day's sales of Fido: the completed order, and the cancelled one apart.
  const today = new Date().toISOString().slice(0, 10);
  const byPet = await admin.sales.report({ from: today, to: today, groupBy: "pet", limit: 1000 });
  assert.equal(byPet.currency, "EUR");
  assert.deepEqual(
    byPet.groups.find((g) => g.petId === fido.id),
    { petId: fido.id, petName: "Fido", orders: 1, units: 2, revenue: 2500, cancelledOrders: 1, cancelledUnits: 10, cancelledRevenue: 12500 },
  );
  const byDay = await admin.sales.report({ from: today, to: today });
  assert.deepEqual(byDay.groups.map((g) => g.day), [today]);
  assert.ok(byDay.totals.revenue >= 2500);

  // Without a price, a pet cannot be ordered.
  assert.equal((await admin.pets.update(fido.id, { price: null })).price, undefined);
  const notForSale = await customer.orders.place({ petId: fido.id, quantity: 1 }).catch((e: unknown) => e);
  assert.ok(notForSale instanceof PetstoreError && notForSale.code === "not_for_sale" && notForSale.status === 409, String(notForSale));

  const refused = await customer.pets.create({ name: "Nope", categoryId: reptiles.id }).catch((e: unknown) => e);
  assert.ok(refused instanceof PetstoreError);
  assert.equal(refused.code, "forbidden");
  assert.equal(refused.status, 403);

  const taken = await admin.categories.delete(reptiles.id).catch((e: unknown) => e);
  assert.ok(taken instanceof PetstoreError && taken.code === "conflict", String(taken));
});

test("errors: validation details, unknown key, missing resource", async () => {
  const invalid = await admin.pets.create({ name: "   ", categoryId: 1 }).catch((e: unknown) => e);
  assert.ok(invalid instanceof PetstoreError);
  assert.equal(invalid.code, "validation_failed");
  assert.equal(invalid.status, 400);
  assert.ok(invalid.message.length > 0);
  assert.deepEqual(invalid.details.map((d) => d.field), ["name"]);
  assert.ok(invalid.details[0] && invalid.details[0].problem.length > 0);
  assert.match(invalid.requestId ?? "", /^[\w.:-]+$/);
  const noCategory = await admin.pets.create({ name: "Stray", categoryId: 999 }).catch((e: unknown) => e);
  assert.ok(noCategory instanceof PetstoreError && noCategory.code === "validation_failed", String(noCategory));
  assert.deepEqual(noCategory.details.map((d) => d.field), ["categoryId"]);

  const stranger = createPetstore({ baseUrl: server.baseUrl, apiKey: "psk_notakeyatall" });
  const unauthorized = await stranger.messages.send({ message: "hi" }).catch((e: unknown) => e);
  assert.ok(unauthorized instanceof PetstoreError);
  assert.equal(unauthorized.code, "unauthorized");
  assert.equal(unauthorized.status, 401);

  const missing = await customer.categories.get(424242).catch((e: unknown) => e);
  assert.ok(missing instanceof PetstoreError && missing.code === "not_found" && missing.status === 404, String(missing));
  assert.equal(String(missing), `PetstoreError: not_found (404): ${missing.message}`);
});

test("lists: every list follows its Link pages; ids is the batch lookup; name finds pets", async () => {
  const requests: string[] = [];
  const counting = createPetstore({
    baseUrl: server.baseUrl,
    apiKey: server.adminKey,
    fetch: (request) => {
      requests.push(new URL(request.url).pathname + new URL(request.url).search);
      return fetch(request);
    },
  });
  const pets = await all(counting.pets.list({ limit: 1 }));
  assert.ok(pets.length >= 6);
  assert.equal(requests.length, pets.length); // one page per pet; the last has no Link
  assert.ok(requests.slice(1).every((r) => r.startsWith("/v1/pets?cursor=")), requests.join(" "));

  assert.deepEqual(
    (await all(counting.categories.list({ limit: 2 }))).slice(0, 3).map((c) => c.name),
    ["Dogs", "Cats", "Birds"],
  );
  const stock = await all(counting.inventory.list({ status: "available", limit: 2 }));
  assert.ok(stock.length >= 4 && stock.every((i) => i.status === "available"));
  assert.deepEqual(
    (await all(counting.pets.list({ ids: [1, 3, 999] }))).map((p) => p.name),
    ["Rex", "Max"],
  );
  assert.ok(requests.includes("/v1/pets?ids=1&ids=3&ids=999"), requests.join(" "));
  assert.deepEqual(
    (await all(counting.inventory.list({ ids: [5, 2, 999] }))).map((i) => i.petId),
    [2, 5],
  );
  assert.deepEqual(
    (await all(counting.pets.list({ name: "LU", limit: 1 }))).map((p) => p.name),
    ["Luna"],
  );
});

test("pets: a description and tags round-trip; tag is sent repeated, means all of them, in any case, across pages", async () => {
  const requests: string[] = [];
  const counting = createPetstore({
    baseUrl: server.baseUrl,
    apiKey: server.adminKey,
    fetch: (request) => {
      requests.push(new URL(request.url).search);
      return fetch(request);
    },
  });
  const [dogs] = await all(admin.categories.list({ limit: 1 }));
  assert.ok(dogs);
  const make = (name: string, tags: string[]) => admin.pets.create({ name, categoryId: dogs.id, tags });
  const sleepy = await admin.pets.create({ name: "Sleepy", categoryId: dogs.id, description: "Naps.\nSnores.", tags: ["Lap dog", "Calm"] });
  assert.equal(sleepy.description, "Naps.\nSnores.");
  assert.deepEqual(sleepy.tags, ["Lap dog", "Calm"]);
  const dozy = await make("Dozy", ["calm", "lap DOG", "senior"]);
  await make("Restless", ["lap dog"]);

  const found = await all(counting.pets.list({ tag: ["LAP DOG", "calm"], limit: 1 }));
  assert.deepEqual(found.map((p) => p.id), [sleepy.id, dozy.id]);
  // Repeated (form, explode), encoded, and kept by the Link of the next page.
  assert.equal(requests[0], "?tag=LAP%20DOG&tag=calm&limit=1");
  assert.ok(requests.slice(1).every((q) => q.includes("cursor=")), requests.join(" "));

  const updated = await admin.pets.update(dozy.id, { tags: null, description: "Old." });
  assert.deepEqual([updated.tags, updated.description], [[], "Old."]);
  const refused = await failure(admin.pets.update(dozy.id, { tags: ["calm", "CALM"] }));
  assert.ok(refused instanceof PetstoreError && refused.status === 400, String(refused));
  assert.equal(refused.details[0]?.field, "tags[1]");
});

test("API keys: listed and revoked with the password, and the revoked key stops working", async () => {
  const email = "grace@example.com";
  const password = "another long password";
  const auth = basicAuth(email, password);
  const anonymous = createPetstore({ baseUrl: server.baseUrl });
  const account = await anonymous.accounts.create({ email, password });
  assert.equal(account.role, "customer");
  const first = await anonymous.apiKeys.create({ name: "one" }, { auth });
  const second = await anonymous.apiKeys.create({ name: "two" }, { auth });
  const own = createPetstore({ baseUrl: server.baseUrl, apiKey: first.key });
  assert.deepEqual(
    (await all(own.apiKeys.list({ limit: 1 }))).map((k) => k.name),
    ["one", "two"],
  );
  await anonymous.apiKeys.revoke(second.id, { auth });
  assert.deepEqual(
    (await all(anonymous.apiKeys.list({}, { auth }))).map((k) => k.id),
    [first.id],
  );
  await own.apiKeys.revoke(first.id);
  const revoked = await own.messages.send({ message: "still there?" }).catch((e: unknown) => e);
  assert.ok(revoked instanceof PetstoreError && revoked.code === "unauthorized", String(revoked));
});

test("staff: an invitation is accepted once, and the password then signs in with a narrowed session", async () => {
  const invitation = await admin.invitations.create({ email: "clerk@example.com", role: "admin" });
  assert.equal(invitation.role, "admin");
  assert.equal(invitation.mailed, false);
  const token = new URL(invitation.url).searchParams.get("token") ?? "";
  assert.match(token, /^psi_[A-Za-z0-9_-]{43}$/);
  const anonymous = createPetstore({ baseUrl: server.baseUrl });
  const accepted = await anonymous.invitations.accept({ token, password: "clerk horse battery" });
  assert.equal(accepted.account.email, "clerk@example.com");
  assert.equal(accepted.account.role, "admin");
  assert.match(accepted.key.key, /^psk_/);
  const replay = await failure(anonymous.invitations.accept({ token, password: "clerk horse battery" }));
  assert.ok(replay instanceof PetstoreError && replay.code === "invalid_token", String(replay));
  const session = await anonymous.sessions.create({ email: "clerk@example.com", password: "clerk horse battery", scopes: ["orders:read"] });
  assert.deepEqual(session.key.scopes, ["orders:read"]);
  const wrong = await failure(anonymous.sessions.create({ email: "clerk@example.com", password: "not the password" }));
  assert.ok(wrong instanceof PetstoreError && wrong.status === 401, String(wrong));
  // Sign-out revokes the session's key with itself (a session without keys:manage
  // cannot: it ends when it expires).
  const signedIn = createPetstore({ baseUrl: server.baseUrl, apiKey: accepted.key.key });
  await signedIn.apiKeys.revoke(accepted.key.id);
  const out = await failure(signedIn.accounts.me());
  assert.ok(out instanceof PetstoreError && out.status === 401, String(out));
});

test("the README's SDK example says sold out once an order took the last units (insufficient_stock, though the pet is pending)", async () => {
  const category = await admin.categories.create({ name: `Sold out ${Date.now()}` });
  const pet = await admin.pets.create({ name: "Last one", categoryId: category.id, price: 1999 });
  await admin.inventory.set(pet.id, { quantity: 2 });
  await customer.orders.place({ petId: pet.id, quantity: 2 }); // takes the last units
  assert.equal((await admin.inventory.get(pet.id)).status, "pending");
  const client = customer;
  const logged: string[] = [];
  const console = { log: (line: string) => logged.push(line) };

  // --- the README's, but for the pet's id ---
  try {
    await client.orders.place({ petId: pet.id, quantity: 2 });
  } catch (error) {
    if (error instanceof PetstoreError && error.code === "insufficient_stock") console.log("sold out");
    else throw error;
  }
  // ---

  assert.deepEqual(logged, ["sold out"]);
});

test("least privilege: a key with scopes and an expiry makes its calls and is refused the others, naming the scope", async () => {
  const email = "barbara@example.com";
  const password = "a least privileged password";
  const anonymous = createPetstore({ baseUrl: server.baseUrl });
  await anonymous.accounts.create({ email, password });
  const baseUrl = server.baseUrl;
  const client = createPetstore({ baseUrl, apiKey: (await anonymous.apiKeys.create({ name: "owner" }, { auth: basicAuth(email, password) })).key });

  // --- least privilege start (the README's, word for word) ---
  const { key, scopes, expiresAt } = await client.apiKeys.create({
    name: "storefront",
    scopes: ["pets:read"],
    expiresAt: new Date(Date.now() + 90 * 24 * 3600 * 1000), // or an RFC 3339 string
  });
  const storefront = createPetstore({ baseUrl, apiKey: key });
  const pets = await storefront.pets.pages({ limit: 1 }).next(); // pets:read: allowed

  let needs: string | undefined;
  try {
    await storefront.orders.place({ petId: 1, quantity: 1 }); // needs orders:write
  } catch (error) {
    if (!(error instanceof PetstoreError) || error.code !== "insufficient_scope") throw error;
    needs = error.scope; // "orders:write"
  }
  // --- least privilege end ---

  assert.deepEqual(scopes, ["pets:read"]);
  assert.ok(expiresAt !== undefined && Math.abs(Date.parse(expiresAt) - (Date.now() + 90 * 24 * 3600 * 1000)) < 60_000, expiresAt);
  assert.equal(pets.value?.items.length, 1);
  assert.equal(needs, "orders:write");
  const refused = await storefront.apiKeys.create({ name: "wider" }).catch((e: unknown) => e);
  assert.ok(refused instanceof PetstoreError && refused.status === 403 && refused.scope === "keys:manage", String(refused));

  // Neither no scope at all nor one beyond a customer's role makes a key.
  for (const wanted of [[], ["webhooks:manage"]] as const) {
    const invalid = await client.apiKeys.create({ name: "refused", scopes: [...wanted] }).catch((e: unknown) => e);
    assert.ok(invalid instanceof PetstoreError && invalid.code === "validation_failed" && invalid.details[0]?.field === "scopes", String(invalid));
  }
  // The list shows each key's scopes and expiry; a key made without them has every scope, for ever.
  const listed = await all(client.apiKeys.list());
  assert.deepEqual(
    listed.map((k) => [k.name, k.scopes, k.expiresAt]),
    [
      ["owner", undefined, undefined],
      ["storefront", ["pets:read"], expiresAt],
    ],
  );
});

test("an expired key is a 401 unauthorized that says it expired", async () => {
  const { key, expiresAt } = await customer.apiKeys.create({ name: "brief", expiresAt: new Date(Date.now() + 2000) });
  const brief = createPetstore({ baseUrl: server.baseUrl, apiKey: key });
  assert.equal((await brief.accounts.me()).email, "customer@example.com"); // and the server caches the key
  assert.ok(expiresAt);
  await new Promise((r) => setTimeout(r, Date.parse(expiresAt) - Date.now() + 100));
  const expired = await brief.accounts.me().catch((e: unknown) => e);
  assert.ok(expired instanceof PetstoreError && expired.status === 401 && expired.code === "unauthorized", String(expired));
  assert.match(expired.message, /expired/);
  assert.equal(expired.scope, undefined);
});

test("accounts.me: the account and role of the key; a missing, unknown or revoked key is a 401", async () => {
  const staff = await admin.accounts.me();
  assert.equal(staff.email, "admin@example.com");
  assert.equal(staff.role, "admin");
  assert.ok(Number.isInteger(staff.id) && staff.id > 0);
  assert.match(staff.createdAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  const shopper = await customer.accounts.me();
  assert.equal(shopper.email, "customer@example.com");
  assert.equal(shopper.role, "customer");
  assert.notEqual(shopper.id, staff.id);

  const email = "linus@example.com";
  const password = "yet another long password";
  const anonymous = createPetstore({ baseUrl: server.baseUrl });
  const account = await anonymous.accounts.create({ email, password });
  const { id, key } = await anonymous.apiKeys.create({ name: "console" }, { auth: basicAuth(email, password) });
  const own = createPetstore({ baseUrl: server.baseUrl, apiKey: key });
  const { key: calling, ...mine } = await own.accounts.me();
  assert.deepEqual(mine, account);
  // A key made without scopes may do everything a customer may, and never expires.
  assert.deepEqual(calling, {
    id,
    scopes: ["account:read", "keys:manage", "messages:read", "messages:write", "orders:read", "orders:write", "pets:read"],
  });
  const expiresAt = new Date(Date.now() + 3600_000);
  expiresAt.setUTCMilliseconds(0);
  const narrowed = await own.apiKeys.create({ name: "clerk", scopes: ["pets:read", "account:read"], expiresAt });
  const clerk = await createPetstore({ baseUrl: server.baseUrl, apiKey: narrowed.key }).accounts.me();
  assert.deepEqual(clerk.key, { id: narrowed.id, scopes: ["account:read", "pets:read"], expiresAt: expiresAt.toISOString().replace(".000Z", "Z") });

  for (const client of [anonymous, createPetstore({ baseUrl: server.baseUrl, apiKey: "psk_notakeyatall" })]) {
    const refused = await client.accounts.me().catch((e: unknown) => e);
    assert.ok(refused instanceof PetstoreError && refused.code === "unauthorized" && refused.status === 401, String(refused));
  }
  await own.apiKeys.revoke(id);
  const revoked = await own.accounts.me().catch((e: unknown) => e);
  assert.ok(revoked instanceof PetstoreError && revoked.code === "unauthorized" && revoked.status === 401, String(revoked));
});

test("accounts.list: an admin looks up accounts by id (an unknown id left out) or a page at a time; a customer's key is a 403 forbidden", async () => {
  const { key: _calling, ...shopper } = await customer.accounts.me();
  const requests: string[] = [];
  const staff = createPetstore({
    baseUrl: server.baseUrl,
    apiKey: server.adminKey,
    fetch: (request) => {
      requests.push(new URL(request.url).pathname + new URL(request.url).search);
      return fetch(request);
    },
  });
  assert.deepEqual(await all(staff.accounts.list({ ids: [shopper.id, 999_999_999] })), [shopper]);
  assert.deepEqual(requests, [`/v1/accounts?ids=${shopper.id}&ids=999999999`]);

  const pages = staff.accounts.pages({ limit: 1 });
  const first = (await pages.next()).value;
  const second = (await pages.next()).value;
  await pages.return();
  assert.ok(first && second, "want two pages of one account");
  assert.equal(first.items.length, 1);
  assert.equal(second.items.length, 1);
  assert.ok(first.items[0]!.id < second.items[0]!.id, "accounts by id");

  const refused = await failure(all(customer.accounts.list({ ids: [shopper.id] })));
  assert.ok(refused instanceof PetstoreError && refused.status === 403 && refused.code === "forbidden", String(refused));
});

test("the deprecated getPetById reports Deprecation, Sunset and its successor", async () => {
  const notices: DeprecationNotice[] = [];
  const client = createPetstore({ baseUrl: server.baseUrl, apiKey: server.customerKey, onDeprecation: (n) => notices.push(n) });
  assert.equal((await client.pets.get(1)).name, "Rex");
  assert.equal(notices.length, 1);
  const [notice] = notices;
  assert.equal(notice?.operation, "GET /pets/{petId}");
  assert.match(notice?.deprecation ?? "", /^@\d+$/);
  assert.equal(notice?.sunset?.toISOString(), "2027-06-30T00:00:00.000Z");
  assert.equal(notice?.successor, `${server.baseUrl}/pets?ids=1`);
});

test("webhooks: an admin adds, reads, lists, changes and removes endpoints; a customer may not", async () => {
  const denied = await failure(customer.webhooks.create({ url: "http://127.0.0.1:9/hook", events: ["*"] }));
  assert.ok(denied instanceof PetstoreError && denied.code === "forbidden" && denied.status === 403, String(denied));
  const notListed = await failure(all(customer.webhooks.list()));
  assert.ok(notListed instanceof PetstoreError && notListed.code === "forbidden", String(notListed));
  const badUrl = await failure(admin.webhooks.create({ url: "ftp://127.0.0.1/hook", events: ["*"] }));
  assert.ok(badUrl instanceof PetstoreError && badUrl.code === "validation_failed", String(badUrl));
  assert.deepEqual(badUrl.details.map((d) => d.field), ["url"]);
  const starBeside = await failure(admin.webhooks.create({ url: "http://127.0.0.1:9/hook", events: ["*", "order.placed"] }));
  assert.ok(starBeside instanceof PetstoreError && starBeside.code === "validation_failed", String(starBeside));

  const first = await admin.webhooks.create({ url: "http://127.0.0.1:9/one", events: ["order.placed", "pet.sold_out"], description: "Order desk" });
  const second = await admin.webhooks.create({ url: "http://127.0.0.1:9/two", events: ["*"] });
  assert.match(first.secret, /^whsec_/);
  assert.notEqual(first.secret, second.secret);
  assert.equal(first.enabled, true);
  assert.deepEqual(first.events, ["order.placed", "pet.sold_out"]);
  const { secret: _secret, ...shown } = first;
  assert.deepEqual(await admin.webhooks.get(first.id), shown);
  assert.ok(!("secret" in (await admin.webhooks.get(first.id))));

  const listed = await all(admin.webhooks.list({ limit: 1 }));
  assert.deepEqual(
    listed.map((w) => w.id),
    [first.id, second.id],
  );
  const pages = admin.webhooks.pages({ limit: 1 });
  const { value: page } = await pages.next();
  assert.deepEqual(
    page?.items.map((w) => w.id),
    [first.id],
  );
  assert.equal(page?.hasNext, true);

  const changed = await admin.webhooks.update(first.id, { events: ["*"], description: null, enabled: false });
  assert.deepEqual(changed.events, ["*"]);
  assert.equal(changed.description, undefined);
  assert.equal(changed.enabled, false);
  assert.equal((await admin.webhooks.update(first.id, { enabled: true })).enabled, true);

  await admin.webhooks.delete(first.id);
  await admin.webhooks.delete(second.id);
  const gone = await failure(admin.webhooks.get(first.id));
  assert.ok(gone instanceof PetstoreError && gone.code === "not_found" && gone.status === 404, String(gone));
  assert.deepEqual(await all(admin.webhooks.list()), []);
});

test("webhook deliveries verify with constructEvent: a test event, a real one also in the feed, both secrets during a rotation", async () => {
  const receiver = await startReceiver();
  try {
    const hook = await admin.webhooks.create({ url: receiver.url, events: ["order.placed"] });

    // A test event: webhook.test, holding the endpoint.
    const test = await admin.webhooks.sendTest(hook.id);
    assert.equal(test.status, "pending");
    assert.equal(test.eventType, "webhook.test");
    assert.equal(test.webhookId, hook.id);
    const testDelivery = await receiver.waitFor((d) => d.id === test.eventId);
    assert.equal(testDelivery.headers["petstore-event-id"], test.eventId);
    const testEvent = await constructEvent(testDelivery.body, testDelivery.signature, hook.secret);
    assert.equal(testEvent.type, "webhook.test");
    assert.equal(testEvent.id, test.eventId);
    assert.equal((testEvent.data as { id: number }).id, hook.id);
    const notFeed = await failure(admin.events.get(test.eventId));
    assert.ok(notFeed instanceof PetstoreError && notFeed.code === "not_found", String(notFeed));

    // A real event: the delivery is the feed's entry, byte for byte as JSON.
    const order = await customer.orders.place({ petId: 2, quantity: 1 });
    const delivered = await receiver.waitFor((d) => d.type === "order.placed");
    const event = await constructEvent(delivered.body.toString("utf8"), delivered.signature, hook.secret);
    assert.equal(event.type, "order.placed");
    assert.deepEqual(event.data, order);
    assert.deepEqual(await admin.events.get(event.id), event);
    const feed = await all(admin.events.list({ type: "order.placed", limit: 1 }));
    assert.deepEqual(feed.at(-1), event);
    assert.ok(feed.every((e) => e.type === "order.placed"));
    const forbidden = await failure(customer.events.get(event.id));
    assert.ok(forbidden instanceof PetstoreError && forbidden.code === "forbidden", String(forbidden));
    // The feed links on from every page that holds events; an empty page ends it.
    const feedPages = admin.events.pages({ type: "order.placed", limit: 100 });
    const { value: full } = await feedPages.next();
    assert.equal(full?.hasNext, true);
    assert.deepEqual(full?.items, feed);
    const { value: caughtUp } = await feedPages.next();
    assert.deepEqual(caughtUp, { items: [], hasNext: false });
    assert.equal((await feedPages.next()).done, true);

    // The live stream, resumed after that event: the next order's comes, and only it.
    const next = await customer.orders.place({ petId: 2, quantity: 1 });
    const stop = new AbortController();
    const streamed: unknown[] = [];
    for await (const e of admin.events.stream({ type: "order.placed", lastEventId: event.id }, { signal: stop.signal })) {
      streamed.push(e.data);
      stop.abort();
    }
    assert.deepEqual(streamed, [next]);

    // The delivery is listed, done at its first attempt.
    const listed = await eventually(
      () => all(admin.deliveries.list(hook.id)),
      (ds) => ds.some((d) => d.eventId === event.id && d.status === "succeeded"),
    );
    const mine = listed.find((d) => d.eventId === event.id);
    assert.equal(mine?.eventType, "order.placed");
    assert.equal(mine?.attempts, 1);

    // Rotation with the default overlap: two v1, either secret verifies.
    const old = hook.secret;
    const rotated = await admin.webhooks.rotateSecret(hook.id);
    assert.match(rotated.secret, /^whsec_/);
    assert.notEqual(rotated.secret, old);
    assert.ok(rotated.previousSecretExpiresAt, "a rotation with the default overlap says until when the old secret signs");
    const overlap = await admin.webhooks.sendTest(hook.id);
    const both = await receiver.waitFor((d) => d.id === overlap.eventId);
    assert.equal(both.signature?.match(/v1=/g)?.length, 2, both.signature);
    assert.equal((await constructEvent(both.body, both.signature, old)).id, overlap.eventId);
    assert.equal((await constructEvent(both.body, both.signature, rotated.secret)).id, overlap.eventId);

    // Revoking at once: only the newest secret signs.
    const revoked = await admin.webhooks.rotateSecret(hook.id, { overlapSeconds: 0 });
    assert.equal(revoked.previousSecretExpiresAt, undefined);
    const after = await admin.webhooks.sendTest(hook.id);
    const single = await receiver.waitFor((d) => d.id === after.eventId);
    assert.equal(single.signature?.match(/v1=/g)?.length, 1, single.signature);
    assert.equal((await constructEvent(single.body, single.signature, revoked.secret)).id, after.eventId);
    for (const stale of [old, rotated.secret]) {
      const refused = await failure(constructEvent(single.body, single.signature, stale));
      assert.ok(refused instanceof WebhookSignatureError && refused.reason === "no_matching_signature", String(refused));
    }

    await admin.webhooks.delete(hook.id);
  } finally {
    await receiver.close();
  }
});

test("deliveries: a failed delivery is retried by hand, once its endpoint is enabled again", async () => {
  const receiver = await startReceiver();
  try {
    receiver.status = 500;
    const hook = await admin.webhooks.create({ url: receiver.url, events: ["pet.status_changed"] });
    const sent = await admin.webhooks.sendTest(hook.id);
    await receiver.waitFor((d) => d.id === sent.eventId);
    const failing = await eventually(
      () => all(admin.deliveries.list(hook.id, { limit: 1 })),
      (ds) => ds.some((d) => d.id === sent.id && d.attempts >= 1 && d.responseStatus === 500),
    );
    const attempt = failing.find((d) => d.id === sent.id);
    assert.equal(attempt?.status, "pending");
    assert.match(attempt?.lastError ?? "", /answered 500/);
    assert.ok(attempt?.nextAttemptAt, "a pending delivery says when its next attempt is due");

    // Disabling the endpoint fails its pending deliveries; they are retried only once it is enabled.
    await admin.webhooks.update(hook.id, { enabled: false });
    const [failed] = await all(admin.deliveries.list(hook.id));
    assert.equal(failed?.status, "failed");
    const disabled = await failure(admin.deliveries.retry(hook.id, sent.id));
    assert.ok(disabled instanceof PetstoreError && disabled.code === "conflict" && disabled.status === 409, String(disabled));
    const unknown = await failure(admin.deliveries.retry(hook.id, sent.id + 1000));
    assert.ok(unknown instanceof PetstoreError && unknown.code === "not_found", String(unknown));

    await admin.webhooks.update(hook.id, { enabled: true });
    receiver.status = 204;
    const before = receiver.received.length;
    const retried = await admin.deliveries.retry(hook.id, sent.id);
    assert.equal(retried.id, sent.id);
    assert.equal(retried.status, "pending");
    assert.equal(retried.attempts, 0);
    const again = await receiver.waitFor((d) => d.id === sent.eventId && receiver.received.indexOf(d) >= before);
    assert.equal((await constructEvent(again.body, again.signature, hook.secret)).id, sent.eventId);
    await eventually(
      () => all(admin.deliveries.list(hook.id)),
      (ds) => ds.some((d) => d.id === sent.id && d.status === "succeeded"),
    );
    const page = await admin.deliveries.pages(hook.id).next();
    assert.deepEqual(
      page.value?.items.map((d) => [d.id, d.status]),
      [[sent.id, "succeeded"]],
    );
    await admin.webhooks.delete(hook.id);
  } finally {
    await receiver.close();
  }
});

test("the README's receiver: a delivery is handled once and answered 204, a forged one 400", async () => {
  let secret = "";
  const events: Event[] = [];
  // --- receiver start (the README's, but for the secret, the port and what handle does) ---
  const handled = new Set<string>(); // a delivery may come more than once: dedupe by event id

  async function handle(event: Event): Promise<void> {
    events.push(event);
  }

  const receiver = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    try {
      const event = await constructEvent(Buffer.concat(chunks), req.headers["petstore-signature"], secret);
      if (!handled.has(event.id)) {
        await handle(event);
        handled.add(event.id);
      }
      res.writeHead(204).end(); // any 2xx within 10 seconds is success
    } catch (error) {
      // 400: not signed with this secret, or too old: do not act on it. Else 500: sent again later.
      res.writeHead(error instanceof WebhookVerificationError ? 400 : 500).end();
    }
  }).listen(0, "127.0.0.1");
  // --- receiver end ---
  let requests = 0;
  receiver.on("request", () => requests++);
  try {
    await new Promise((resolve) => receiver.once("listening", resolve));
    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/`;
    const hook = await admin.webhooks.create({ url, events: ["inventory.updated"] });
    secret = hook.secret;

    const sent = await admin.webhooks.sendTest(hook.id);
    await eventually(
      () => all(admin.deliveries.list(hook.id)),
      (ds) => ds.some((d) => d.id === sent.id && d.status === "succeeded"),
    );
    // Sent again: answered 204, not handled twice.
    await admin.deliveries.retry(hook.id, sent.id);
    await eventually(
      () => admin.deliveries.pages(hook.id).next(),
      (page) => page.value?.items.some((d) => d.id === sent.id && d.status === "succeeded" && d.attempts === 1) ?? false,
    );
    assert.deepEqual(
      events.map((e) => [e.id, e.type]),
      [[sent.eventId, "webhook.test"]],
    );
    assert.equal(requests, 2);

    const body = JSON.stringify({ id: "evt_forgedforgedforgedforgedfo", type: "order.placed", createdAt: "2026-11-21T12:00:30Z", data: {} });
    const forged = await fetch(url, {
      method: "POST",
      body,
      headers: { "Petstore-Signature": `t=${Math.floor(Date.now() / 1000)},v1=${"0".repeat(64)}`, "Content-Type": "application/json" },
    });
    assert.equal(forged.status, 400);
    assert.equal((await fetch(url, { method: "POST", body })).status, 400);
    assert.equal(events.length, 1);
    await admin.webhooks.delete(hook.id);
  } finally {
    await new Promise((resolve) => receiver.close(resolve));
  }
});
