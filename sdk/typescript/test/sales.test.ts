// Prices, an order's whole life, the order filters and the sales report, against a stub:
// what each call sends, and that what comes back is passed on as it came.
import assert from "node:assert/strict";
import { afterEach, test } from "node:test";
import { createPetstore, knownValues, PetstoreError, type Order, type OrderStatus, type SalesReport } from "@acme-pets/petstore";
import { json, startStub, type Stub } from "./stub.js";

let stub: Stub | undefined;
afterEach(async () => {
  await stub?.close();
  stub = undefined;
});

const pet = { id: 1, name: "Rex", categoryId: 2, status: "available", stock: 3, price: 1999, currency: "EUR" };

test("a price is sent on create, kept out of a replacement that leaves it out, and null in a patch takes it away", async () => {
  stub = await startStub((_req, res) => json(res, 200, pet));
  const client = createPetstore({ baseUrl: stub.baseUrl, apiKey: "psk_test" });

  assert.deepEqual(await client.pets.create({ name: "Rex", categoryId: 2, price: 1999 }), pet);
  await client.pets.create({ name: "Free", categoryId: 2, price: 0 });
  await client.pets.replace(1, { name: "Rex", categoryId: 2 });
  await client.pets.update(1, { price: null });
  await client.pets.update(1, { price: 2500, name: "Max" });

  assert.deepEqual(
    stub.requests.map((r) => `${r.method} ${r.url} ${r.headers["content-type"] ?? ""} ${r.body}`),
    [
      'POST /v1/pets application/json {"name":"Rex","categoryId":2,"price":1999}',
      'POST /v1/pets application/json {"name":"Free","categoryId":2,"price":0}',
      'PUT /v1/pets/1 application/json {"name":"Rex","categoryId":2}',
      'PATCH /v1/pets/1 application/json {"price":null}',
      'PATCH /v1/pets/1 application/json {"price":2500,"name":"Max"}',
    ],
  );
});

test("orders.list sends every filter and the sort, and passes each order's life on", async () => {
  const cancelled = {
    id: 10,
    petId: 1,
    quantity: 2,
    complete: false,
    accountId: 2,
    status: "cancelled",
    createdAt: "2026-11-21T12:00:30Z",
    cancelledAt: "2026-11-21T13:00:00Z",
    unitPrice: 1999,
    total: 3998,
    currency: "EUR",
    petName: "Rex",
  };
  const refunded = { ...cancelled, id: 9, status: "refunded" }; // a status a newer server may add
  stub = await startStub((_req, res) => json(res, 200, [cancelled, refunded]));
  const client = createPetstore({ baseUrl: stub.baseUrl, apiKey: "psk_test" });

  const orders: Order[] = [];
  for await (const order of client.orders.list({
    status: "cancelled",
    accountId: 2,
    createdAfter: "2026-11-01T00:00:00Z",
    createdBefore: "2026-12-01T00:00:00+01:00",
    sort: "oldest",
    limit: 5,
  })) {
    orders.push(order);
  }
  assert.deepEqual(orders, [cancelled, refunded]);
  const url = new URL(stub.requests[0]?.url ?? "", "http://stub");
  assert.equal(url.pathname, "/v1/store/orders");
  assert.deepEqual(Object.fromEntries(url.searchParams), {
    status: "cancelled",
    accountId: "2",
    createdAfter: "2026-11-01T00:00:00Z",
    createdBefore: "2026-12-01T00:00:00+01:00",
    sort: "oldest",
    limit: "5",
  });

  // An unknown status is neither completed nor cancelled.
  const closed = (status: OrderStatus) => status === "completed" || status === "cancelled";
  assert.deepEqual(
    orders.map((o) => closed(o.status)),
    [true, false],
  );
  assert.deepEqual(knownValues.orderStatus, ["placed", "completed", "cancelled"]);
});

test("sales.report sends its query and returns the report", async () => {
  const report: SalesReport = {
    from: "2026-11-01",
    to: "2026-11-30",
    groupBy: "day",
    currency: "EUR",
    totals: { orders: 3, units: 4, revenue: 7996, cancelledOrders: 1, cancelledUnits: 1, cancelledRevenue: 1999 },
    groups: [{ day: "2026-11-21", orders: 3, units: 4, revenue: 7996, cancelledOrders: 1, cancelledUnits: 1, cancelledRevenue: 1999 }],
  };
  stub = await startStub((_req, res) => json(res, 200, report));
  const client = createPetstore({ baseUrl: stub.baseUrl, apiKey: "psk_test" });

  assert.deepEqual(await client.sales.report({ from: "2026-11-01", to: "2026-11-30", groupBy: "day" }), report);
  await client.sales.report();
  assert.deepEqual(
    stub.requests.map((r) => `${r.method} ${r.url}`),
    ["GET /v1/store/sales?from=2026-11-01&to=2026-11-30&groupBy=day", "GET /v1/store/sales"],
  );
});

test("not_for_sale is a code of its own: no price is not sold out", async () => {
  stub = await startStub((_req, res) => json(res, 409, { code: "not_for_sale", message: "Pet 1 has no price, so it cannot be ordered.", status: 409 }));
  const client = createPetstore({ baseUrl: stub.baseUrl, apiKey: "psk_test" });
  await assert.rejects(client.orders.place({ petId: 1, quantity: 1 }), (error: unknown) => {
    assert.ok(error instanceof PetstoreError);
    assert.equal(error.code, "not_for_sale");
    assert.equal(error.status, 409);
    return true;
  });
});
