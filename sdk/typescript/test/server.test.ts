// The SDK against the real server (PETSTORE_BIN): the README's walk-through, an admin's
// day, errors, every list and the deprecated call.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { basicAuth, createPetstore, PetstoreError, type DeprecationNotice, type Petstore } from "@acme-pets/petstore";
import { startPetstore, type Server } from "./harness.js";

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

test("admin: a category, a pet in it, its stock, changes, an order completed and one cancelled", async () => {
  const reptiles = await admin.categories.create({ name: "Reptiles", description: "Cold-blooded friends." });
  const fido = await admin.pets.create({ name: "Fido", categoryId: reptiles.id });
  assert.equal(fido.status, "available");
  assert.deepEqual(await admin.inventory.set(fido.id, { quantity: 12 }), { petId: fido.id, quantity: 12, status: "available" });
  assert.deepEqual(await all(customer.pets.list({ categoryId: reptiles.id })), [fido]);

  assert.equal((await admin.pets.update(fido.id, { name: "Fido II" })).name, "Fido II");
  assert.equal((await admin.pets.replace(fido.id, { name: "Fido", categoryId: reptiles.id })).name, "Fido");
  const renamed = await admin.categories.replace(reptiles.id, { name: "Reptiles & co" });
  assert.equal(renamed.description, undefined);
  assert.deepEqual(await customer.categories.get(reptiles.id), renamed);

  const kept = await customer.orders.place({ petId: fido.id, quantity: 2 });
  const dropped = await customer.orders.place({ petId: fido.id, quantity: 10 });
  assert.equal((await customer.inventory.get(fido.id)).status, "pending");
  const shipDate = "2026-12-24T10:00:00Z";
  assert.deepEqual(await admin.orders.update(kept.id, { complete: true, shipDate }), { ...kept, complete: true, shipDate });
  await customer.orders.cancel(dropped.id);
  assert.deepEqual(await customer.inventory.get(fido.id), { petId: fido.id, quantity: 10, status: "available" });
  assert.deepEqual(
    (await all(admin.orders.list({ complete: true, limit: 1 }))).map((o) => o.id),
    [kept.id],
  );

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
  assert.deepEqual(await own.accounts.me(), account);

  for (const client of [anonymous, createPetstore({ baseUrl: server.baseUrl, apiKey: "psk_notakeyatall" })]) {
    const refused = await client.accounts.me().catch((e: unknown) => e);
    assert.ok(refused instanceof PetstoreError && refused.code === "unauthorized" && refused.status === 401, String(refused));
  }
  await own.apiKeys.revoke(id);
  const revoked = await own.accounts.me().catch((e: unknown) => e);
  assert.ok(revoked instanceof PetstoreError && revoked.code === "unauthorized" && revoked.status === 401, String(revoked));
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
