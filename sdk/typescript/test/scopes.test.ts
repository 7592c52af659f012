// Keys with scopes and lifetimes against a stub: what apiKeys.create sends, what a key
// reads as, and the scope an insufficient_scope answer names, however the server or a
// proxy writes WWW-Authenticate. (server.test.ts makes the same calls to the real server.)
import assert from "node:assert/strict";
import { afterEach, test } from "node:test";
import { createPetstore, PetstoreError, type ApiKey, type Scope } from "@acme-pets/petstore";
import { json, startStub, type Stub } from "./stub.js";

let stub: Stub | undefined;
afterEach(async () => {
  await stub?.close();
  stub = undefined;
});

const created = {
  id: 3,
  name: "shop",
  key: "psk_x",
  prefix: "psk_x",
  createdAt: "2026-11-21T12:00:00Z",
  scopes: ["pets:read", "pets:adopt"],
  expiresAt: "2027-01-01T00:00:00Z",
};

test("apiKeys.create sends scopes and expiresAt (a Date as RFC 3339), and reads the key's", async () => {
  stub = await startStub((req, res) => {
    if (req.method === "POST") return json(res, 201, created);
    json(res, 200, [
      { id: 3, name: "shop", prefix: "psk_x", createdAt: "2026-11-21T12:00:00Z", scopes: ["pets:read"], expiresAt: "2027-01-01T00:00:00Z", lastUsedAt: "2026-11-24T09:31:00Z" },
      { id: 4, name: "laptop", prefix: "psk_y", createdAt: "2026-11-21T12:00:00Z" },
    ]);
  });
  const client = createPetstore({ baseUrl: stub.baseUrl, apiKey: "psk_test" });

  await client.apiKeys.create({ name: "all" });
  await client.apiKeys.create({ name: "shop", scopes: ["pets:read", "orders:write"], expiresAt: new Date("2027-01-01T00:00:00Z") });
  const key = await client.apiKeys.create({ name: "string", expiresAt: "2027-01-01T01:00:00+01:00" });
  assert.deepEqual(
    stub.requests.map((r) => JSON.parse(r.body) as unknown),
    [
      { name: "all" },
      { name: "shop", scopes: ["pets:read", "orders:write"], expiresAt: "2027-01-01T00:00:00.000Z" },
      { name: "string", expiresAt: "2027-01-01T01:00:00+01:00" },
    ],
  );
  const known: Scope[] = ["pets:read", "pets:adopt"]; // a scope a newer server adds passes through
  assert.deepEqual(key.scopes, known);
  assert.equal(key.expiresAt, "2027-01-01T00:00:00Z");

  const keys: ApiKey[] = [];
  for await (const k of client.apiKeys.list()) keys.push(k);
  assert.deepEqual(
    keys.map(({ scopes, expiresAt, lastUsedAt }) => ({ scopes, expiresAt, lastUsedAt })),
    [
      { scopes: ["pets:read"], expiresAt: "2027-01-01T00:00:00Z", lastUsedAt: "2026-11-24T09:31:00Z" },
      { scopes: undefined, expiresAt: undefined, lastUsedAt: undefined },
    ],
  );

  const sent = stub.requests.length;
  await assert.rejects(client.apiKeys.create({ name: "bad", expiresAt: new Date(Number.NaN) }), RangeError);
  assert.equal(stub.requests.length, sent, "an invalid Date is sent nowhere");
});

for (const [header, want] of [
  ['Bearer error="insufficient_scope", scope="orders:write"', "orders:write"],
  ['Bearer error=insufficient_scope,scope="orders:write"', "orders:write"],
  ['bearer ERROR = "insufficient_scope" , Scope = "orders:write"', "orders:write"],
  ['Basic realm="scope=\\"pets:read\\", x", Bearer error="insufficient_scope", scope="a\\"b"', 'a"b'],
  ['Basic dXNlcjpwYXNz==, Bearer scope="pets:write"', "pets:write"],
  ['Basic realm="shop", scope="pets:read"', undefined], // another scheme's
  ["Bearer", undefined],
  ['Bearer error="insufficient_scope", scope="orders:wri', undefined], // no closing quote
  ['Bearer realm="petstore", error="insufficient_scope", error_description="No.", scope="x y"', "x y"],
] as const) {
  test(`insufficient_scope names the scope of WWW-Authenticate: ${header}`, async () => {
    stub = await startStub((_req, res) =>
      json(res, 403, { code: "insufficient_scope", message: "This API key lacks the scope orders:write, which this operation needs.", status: 403 }, {
        "WWW-Authenticate": header,
      }),
    );
    const error = await createPetstore({ baseUrl: stub.baseUrl, apiKey: "psk_test" })
      .orders.place({ petId: 1, quantity: 1 })
      .catch((e: unknown) => e);
    assert.ok(error instanceof PetstoreError && error.code === "insufficient_scope" && error.status === 403, String(error));
    assert.equal(error.scope, want);
  });
}

test("a challenge in a WWW-Authenticate header of its own counts too", async () => {
  stub = await startStub((_req, res) => {
    res.writeHead(403, { "Content-Type": "application/json", "WWW-Authenticate": ['Basic realm="proxy"', 'Bearer error="insufficient_scope", scope="pets:write"'] });
    res.end(JSON.stringify({ code: "insufficient_scope", message: "No.", status: 403 }));
  });
  const error = await createPetstore({ baseUrl: stub.baseUrl, apiKey: "psk_test" }).pets.delete(1).catch((e: unknown) => e);
  assert.ok(error instanceof PetstoreError);
  assert.equal(error.scope, "pets:write");
});

test("other errors name no scope", async () => {
  stub = await startStub((_req, res) => json(res, 401, { code: "unauthorized", message: "A valid API key is required.", status: 401 }, { "WWW-Authenticate": "Bearer" }));
  const error = await createPetstore({ baseUrl: stub.baseUrl, apiKey: "psk_test" }).accounts.me().catch((e: unknown) => e);
  assert.ok(error instanceof PetstoreError && error.code === "unauthorized");
  assert.equal(error.scope, undefined);
});
