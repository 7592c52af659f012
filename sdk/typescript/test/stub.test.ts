// What the real server rarely does on demand: 429/503 with Retry-After, dropped
// connections, deprecation headers, and values a newer server may add to open lists.
import assert from "node:assert/strict";
import { afterEach, test } from "node:test";
import { createPetstore, PetstoreError, type DeprecationNotice, type Pet, type PetStatus } from "@acme-pets/petstore";
import { json, startStub, type Stub } from "./stub.js";

let stub: Stub | undefined;
afterEach(async () => {
  await stub?.close();
  stub = undefined;
});

const order = { id: 10, petId: 1, quantity: 2, complete: false, accountId: 2 };
const unavailable = { code: "unavailable", message: "The service is unavailable; retry later.", status: 503 };
const rateLimited = { code: "rate_limited", message: "Too many requests; retry after 1 second.", status: 429 };

test("placeOrder retries a 503 after Retry-After and a 429 after a back-off, with the same Idempotency-Key", async () => {
  stub = await startStub((_req, res, i) => {
    if (i === 0) return json(res, 503, unavailable, { "Retry-After": "1" });
    if (i === 1) return json(res, 429, rateLimited);
    json(res, 201, order, { Location: "/v1/store/orders/10" });
  });
  const client = createPetstore({ baseUrl: stub.baseUrl, apiKey: "psk_test" });
  const started = Date.now();
  assert.deepEqual(await client.orders.place({ petId: 1, quantity: 2 }), order);
  assert.ok(Date.now() - started >= 1000, "waited for Retry-After");

  assert.equal(stub.requests.length, 3);
  const keys = stub.requests.map((r) => r.headers["idempotency-key"]);
  assert.match(String(keys[0]), /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  assert.deepEqual(keys, [keys[0], keys[0], keys[0]]);
  for (const r of stub.requests) {
    assert.equal(r.method, "POST");
    assert.equal(r.url, "/v1/store/orders");
    assert.deepEqual(JSON.parse(r.body), { petId: 1, quantity: 2 });
    assert.equal(r.headers.authorization, "Bearer psk_test");
  }
});

test("a given Idempotency-Key is sent as is; retries are bounded and end in the PetstoreError", async () => {
  stub = await startStub((_req, res) => json(res, 503, unavailable, { "X-Request-Id": "req-1" }));
  const client = createPetstore({ baseUrl: stub.baseUrl, retries: 2 });
  const error = await client.orders.place({ petId: 1, quantity: 1 }, { idempotencyKey: "my-key" }).catch((e: unknown) => e);
  assert.ok(error instanceof PetstoreError);
  assert.equal(error.code, "unavailable");
  assert.equal(error.status, 503);
  assert.equal(error.requestId, "req-1");
  assert.equal(stub.requests.length, 3);
  assert.deepEqual(
    stub.requests.map((r) => r.headers["idempotency-key"]),
    ["my-key", "my-key", "my-key"],
  );
});

test("a POST without an Idempotency-Key is never retried", async () => {
  stub = await startStub((_req, res) => json(res, 503, unavailable, { "Retry-After": "1" }));
  const client = createPetstore({ baseUrl: stub.baseUrl });
  const error = await client.pets.create({ name: "Rex", categoryId: 1 }).catch((e: unknown) => e);
  assert.ok(error instanceof PetstoreError && error.code === "unavailable");
  assert.equal(error.retryAfter, 1);
  assert.equal(stub.requests.length, 1);
});

test("a GET is retried after a dropped connection", async () => {
  stub = await startStub((_req, res, i) => {
    if (i === 0) return res.socket?.destroy();
    json(res, 200, { id: 3, name: "Dogs" });
  });
  const client = createPetstore({ baseUrl: stub.baseUrl });
  assert.deepEqual(await client.categories.get(3), { id: 3, name: "Dogs" });
  assert.equal(stub.requests.length, 2);
});

test("an AbortSignal ends the wait for a retry", async () => {
  stub = await startStub((_req, res) => json(res, 429, rateLimited, { "Retry-After": "20" }));
  const client = createPetstore({ baseUrl: stub.baseUrl });
  const started = Date.now();
  const error = await client.orders
    .place({ petId: 1, quantity: 1 }, { signal: AbortSignal.timeout(200) })
    .catch((e: unknown) => e);
  assert.ok(error instanceof DOMException && error.name === "TimeoutError", String(error));
  assert.ok(Date.now() - started < 5000);
  assert.equal(stub.requests.length, 1);
});

test("a Retry-After longer than maxRetryDelayMs is not waited for", async () => {
  stub = await startStub((_req, res) => json(res, 429, rateLimited, { "Retry-After": "3600" }));
  const client = createPetstore({ baseUrl: stub.baseUrl, maxRetryDelayMs: 5000 });
  const error = await client.categories.get(1).catch((e: unknown) => e);
  assert.ok(error instanceof PetstoreError && error.code === "rate_limited");
  assert.equal(error.retryAfter, 3600);
  assert.equal(stub.requests.length, 1);
});

test("an answer that is not a Pet Store error is still a PetstoreError", async () => {
  stub = await startStub((_req, res) => {
    res.writeHead(502, { "Content-Type": "text/html" });
    res.end("<h1>Bad gateway</h1>");
  });
  const error = await createPetstore({ baseUrl: stub.baseUrl }).categories.get(1).catch((e: unknown) => e);
  assert.ok(error instanceof PetstoreError);
  assert.equal(error.code, "");
  assert.equal(error.status, 502);
  assert.match(error.message, /^HTTP 502 Bad Gateway: <h1>Bad gateway<\/h1>$/);
  assert.deepEqual(error.details, []);
  assert.equal(String(error), "PetstoreError: HTTP 502 Bad Gateway: <h1>Bad gateway</h1>");
});

test("a PetstoreError reads as its code, status and message", async () => {
  stub = await startStub((_req, res) => json(res, 404, { code: "not_found", message: "No pet 7.", status: 404 }));
  const error = await createPetstore({ baseUrl: stub.baseUrl }).pets.update(7, { name: "Rex" }).catch((e: unknown) => e);
  assert.ok(error instanceof PetstoreError);
  assert.equal(error.toString(), "PetstoreError: not_found (404): No pet 7.");
  assert.equal(`${error}`, "PetstoreError: not_found (404): No pet 7.");
  assert.equal(error.message, "No pet 7.");
});

const deprecated = {
  Deprecation: "@1793491200",
  Sunset: "Wed, 30 Jun 2027 00:00:00 GMT",
  Link: '</v1/pets?ids=7>; rel="successor-version"',
};

test("deprecation: onDeprecation hears every answer; by default one console.warn per operation", async (t) => {
  stub = await startStub((_req, res) => json(res, 200, { id: 7, name: "Rex", categoryId: 1, status: "available" }, deprecated));

  const notices: DeprecationNotice[] = [];
  const client = createPetstore({ baseUrl: stub.baseUrl, onDeprecation: (n) => notices.push(n) });
  await client.pets.get(7);
  await client.pets.get(7);
  assert.equal(notices.length, 2);
  assert.deepEqual(notices[0], {
    operation: "GET /pets/{petId}",
    deprecation: "@1793491200",
    sunset: new Date("2027-06-30T00:00:00Z"),
    successor: `${new URL(stub.baseUrl).origin}/v1/pets?ids=7`,
  });

  const warn = t.mock.method(console, "warn", () => {});
  const quiet = createPetstore({ baseUrl: stub.baseUrl });
  await quiet.pets.get(7);
  await quiet.pets.get(8);
  await quiet.categories.get(1); // also "deprecated" here, a second operation
  assert.equal(warn.mock.callCount(), 2);
  assert.deepEqual(warn.mock.calls[0]?.arguments, [
    `petstore: GET /pets/{petId} is deprecated; it stops working on 2027-06-30; use ${new URL(stub.baseUrl).origin}/v1/pets?ids=7 instead`,
  ]);
});

test("values a newer server adds to open lists pass through unchanged", async () => {
  stub = await startStub((req, res) => {
    if (req.url === "/v1/pets?limit=1") {
      return json(res, 200, [{ id: 1, name: "Rex", categoryId: 1, status: "reserved" }], {
        Link: '</v1/pets?cursor=c2&limit=1>; rel="next"',
      });
    }
    if (req.url === "/v1/pets?cursor=c2&limit=1") return json(res, 200, [{ id: 2, name: "Bella", categoryId: 1, status: "available" }]);
    if (req.url === "/v1/accounts") {
      return json(res, 201, { id: 5, email: "audit@example.com", role: "auditor", createdAt: "2026-11-21T12:00:00Z" });
    }
    if (req.url === "/v1/store/inventory/1") return json(res, 200, { petId: 1, quantity: 0, status: "reserved" });
    if (req.url === "/v1/messages") {
      return json(res, 201, { id: "msg_1", message: "hi", status: "delivered", createdAt: "2026-11-21T12:00:00Z" });
    }
    json(res, 418, { code: "teapot", message: "I am a teapot.", status: 418 });
  });
  const client = createPetstore({ baseUrl: stub.baseUrl });

  const pets: Pet[] = [];
  for await (const pet of client.pets.list({ limit: 1 })) pets.push(pet);
  assert.deepEqual(
    pets.map((p) => p.status),
    ["reserved", "available"],
  );
  const describe = (status: PetStatus) => (status === "available" ? "for sale" : status === "reserved" ? "reserved" : "not for sale");
  assert.equal(describe(pets[0]?.status ?? ""), "reserved");

  const account = await client.accounts.create({ email: "audit@example.com", password: "correct horse battery" });
  assert.equal(account.role, "auditor");
  assert.equal((await client.inventory.get(1)).status, "reserved");
  assert.equal((await client.messages.send({ message: "hi" })).status, "delivered");
  const error = await client.categories.get(1).catch((e: unknown) => e);
  assert.ok(error instanceof PetstoreError && error.code === "teapot" && error.status === 418, String(error));
});

// --- Review: lists that misbehave, Retry-After forms, long waits, odd deprecation headers ---

const dogs = { id: 1, name: "Dogs" };

for (const [name, links] of [
  ["to the same page", { "": "c2", c2: "c2" }],
  ["to an earlier page", { "": "c2", c2: "c3", c3: "c2" }],
  ["to the first page", { "": "c2", c2: "" }],
] as const) {
  test(`a list whose Link leads back ${name} ends with an error instead of looping`, async () => {
    const pages: Record<string, string> = links;
    stub = await startStub((req, res, i) => {
      const cursor = new URL(req.url, "http://stub").searchParams.get("cursor") ?? "";
      const next = pages[cursor];
      // Past 10 pages the stub stops linking, so that a client that loops ends.
      const link: Record<string, string> = next === undefined || i >= 10 ? {} : { Link: `</v1/categories${next ? `?cursor=${next}` : ""}>; rel="next"` };
      json(res, 200, [dogs], link);
    });
    const seen: unknown[] = [];
    const error = await (async () => {
      for await (const category of createPetstore({ baseUrl: stub.baseUrl }).categories.list()) seen.push(category);
    })().catch((e: unknown) => e);
    assert.ok(error instanceof Error && /already fetched/.test(error.message), String(error));
    assert.equal(stub.requests.length, Object.keys(pages).length, "each page once");
    assert.equal(seen.length, Object.keys(pages).length);
  });
}

test("a list never follows a Link to another origin (it would carry the key there)", async () => {
  const elsewhere = await startStub((_req, res) => json(res, 200, [dogs]));
  try {
    stub = await startStub((_req, res) => json(res, 200, [dogs], { Link: `<${elsewhere.baseUrl}/categories?cursor=c2>; rel="next"` }));
    const items: unknown[] = [];
    const error = await (async () => {
      for await (const c of createPetstore({ baseUrl: stub.baseUrl, apiKey: "psk_secret" }).categories.list()) items.push(c);
    })().catch((e: unknown) => e);
    assert.ok(error instanceof Error && /leaves/.test(error.message), String(error));
    assert.equal(items.length, 1);
    assert.equal(elsewhere.requests.length, 0, "no request, and so no key, to the other origin");
  } finally {
    await elsewhere.close();
  }
});

test("Link targets are resolved against the page's URL (RFC 8288), not appended to baseUrl", async () => {
  stub = await startStub((req, res) => {
    if (req.url === "/v1/pets?limit=1") return json(res, 200, [{ id: 1, name: "Rex", categoryId: 1, status: "available" }], { Link: '<pets?cursor=c2&limit=1>; rel="next"' });
    if (req.url === "/v1/pets?cursor=c2&limit=1") return json(res, 200, [{ id: 2, name: "Bella", categoryId: 1, status: "available" }], { Link: '<?cursor=c3&limit=1>; rel="next"' });
    if (req.url === "/v1/pets?cursor=c3&limit=1") return json(res, 200, [{ id: 3, name: "Max", categoryId: 1, status: "available" }]);
    json(res, 404, { code: "not_found", message: `no ${req.url}`, status: 404 });
  });
  const names: string[] = [];
  for await (const pet of createPetstore({ baseUrl: stub.baseUrl }).pets.list({ limit: 1 })) names.push(pet.name);
  assert.deepEqual(names, ["Rex", "Bella", "Max"]);
});

test("a relative successor-version link is resolved against the URL of the request", async () => {
  stub = await startStub((_req, res) =>
    json(res, 200, { id: 7, name: "Rex", categoryId: 1, status: "available" }, { Deprecation: "@1793491200", Link: '<../pets?ids=7>; rel="successor-version"' }),
  );
  const notices: DeprecationNotice[] = [];
  await createPetstore({ baseUrl: stub.baseUrl, onDeprecation: (n) => notices.push(n) }).pets.get(7);
  assert.equal(notices[0]?.successor, `${stub.baseUrl}/pets?ids=7`);
});

test("Retry-After: only delay-seconds and HTTP-dates count; anything else is no Retry-After", async () => {
  const inTwoMinutes = new Date(Date.now() + 120_000);
  const asctime = inTwoMinutes.toUTCString().replace(/^(\w+), (\d+) (\w+) (\d+) (\S+) GMT$/, (_m, d, day, mon, y, t) => `${d} ${mon} ${String(day).padStart(2, " ")} ${t} ${y}`);
  const cases: [string, (s: number | undefined) => boolean][] = [
    ["7", (s) => s === 7],
    ["99999999999999999999", (s) => s === 1e20],
    ["-5", (s) => s === undefined],
    ["1.5", (s) => s === undefined],
    ["Foo 12", (s) => s === undefined],
    ["1, 2", (s) => s === undefined],
    [inTwoMinutes.toUTCString(), (s) => s !== undefined && s >= 115 && s <= 121],
    [asctime, (s) => s !== undefined && s >= 115 && s <= 121], // asctime is GMT, whatever the local zone
    ["Sun, 06 Nov 1994 08:49:37 GMT", (s) => s === 0],
  ];
  let value = "";
  stub = await startStub((_req, res) => json(res, 503, unavailable, { "Retry-After": value }));
  const client = createPetstore({ baseUrl: stub.baseUrl });
  for (const [header, ok] of cases) {
    value = header;
    const error = await client.pets.create({ name: "Rex", categoryId: 1 }).catch((e: unknown) => e);
    assert.ok(error instanceof PetstoreError);
    assert.ok(ok(error.retryAfter), `Retry-After: ${header} gave ${error.retryAfter}`);
  }
});

test("a Retry-After too long for a timer is not waited for, even when maxRetryDelayMs allows it", async () => {
  // setTimeout fires at once for a delay over 2^31-1 ms (about 24.8 days).
  stub = await startStub((_req, res) => json(res, 429, rateLimited, { "Retry-After": "2147484" }));
  const client = createPetstore({ baseUrl: stub.baseUrl, retries: 1, maxRetryDelayMs: Number.POSITIVE_INFINITY });
  const error = await client.categories.get(1).catch((e: unknown) => e);
  assert.ok(error instanceof PetstoreError && error.code === "rate_limited", String(error));
  assert.equal(error.retryAfter, 2147484);
  assert.equal(stub.requests.length, 1);
});

test("odd deprecation headers never fail the call: a bad successor or Sunset is left out", async () => {
  const headers = { Deprecation: "@1793491200", Sunset: "2", Link: '<http://[::1>; rel="successor-version"' };
  stub = await startStub((_req, res) => json(res, 200, { id: 7, name: "Rex", categoryId: 1, status: "available" }, headers));
  const notices: DeprecationNotice[] = [];
  const client = createPetstore({ baseUrl: stub.baseUrl, onDeprecation: (n) => notices.push(n) });
  assert.equal((await client.pets.get(7)).name, "Rex");
  assert.equal(notices.length, 1);
  assert.equal(notices[0]?.successor, undefined);
  assert.equal(notices[0]?.sunset, undefined);
});

test("createPetstore refuses a base URL or key that every call would get wrong", () => {
  for (const baseUrl of [
    "",
    "/v1",
    "localhost:8080/v1",
    "ftp://example.com/v1",
    "http://localhost:8080/v1?key=psk_x",
    "http://localhost:8080/v1?",
    "http://localhost:8080/v1#top",
    "http://ada:pw@localhost:8080/v1",
  ]) {
    assert.throws(() => createPetstore({ baseUrl }), TypeError, `baseUrl ${JSON.stringify(baseUrl)}`);
  }
  assert.throws(() => createPetstore({ baseUrl: "http://localhost:8080/v1", apiKey: "" }), TypeError);
  assert.doesNotThrow(() => createPetstore({ baseUrl: "http://localhost:8080/v1/", apiKey: "psk_x" }));
});

test("pages yields one page per request and says whether another follows, fetching it only when asked", async () => {
  stub = await startStub((req, res) => {
    const cursor = new URL(req.url, "http://stub").searchParams.get("cursor");
    if (cursor === null) return json(res, 200, [dogs, { id: 2, name: "Cats" }], { Link: '</v1/categories?cursor=c2&limit=2>; rel="next"' });
    json(res, 200, [{ id: 3, name: "Birds" }]);
  });
  const pages = createPetstore({ baseUrl: stub.baseUrl }).categories.pages({ limit: 2 });
  const first = await pages.next();
  assert.deepEqual(first.value, { items: [dogs, { id: 2, name: "Cats" }], hasNext: true });
  assert.equal(stub.requests.length, 1, "the next page is not fetched before it is asked for");
  const second = await pages.next();
  assert.deepEqual(second.value, { items: [{ id: 3, name: "Birds" }], hasNext: false });
  assert.equal(stub.requests[1]?.url, "/v1/categories?cursor=c2&limit=2");
  assert.equal((await pages.next()).done, true);
  assert.equal(stub.requests.length, 2);
});
