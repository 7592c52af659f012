// constructEvent on signatures made here with node:crypto, as the document says the service
// makes them: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">. Real deliveries of the
// binary are checked in server.test.ts.
import assert from "node:assert/strict";
import { createHmac } from "node:crypto";
import { test } from "node:test";
import {
  constructEvent,
  WebhookHeaderError,
  WebhookSignatureError,
  WebhookTimestampError,
  WebhookVerificationError,
  type Event,
} from "@acme-pets/petstore";

const secret = "whsec_jFdTa3Jhh-3z0jMT93lBFRecmYGrw-BrMfqUK9yZweY";
const other = "whsec_another-secret-of-the-same-shape-0123456789";
const t = 1_795_000_000; // a Unix time in seconds
const at = (seconds: number) => () => seconds * 1000; // a clock for `now`

const event: Event = {
  id: "evt_mfrggzdfmztwq2lknnwg23tpob",
  type: "order.placed",
  createdAt: "2026-11-21T12:00:30Z",
  data: {
    id: 10,
    petId: 1,
    quantity: 2,
    complete: false,
    accountId: 2,
    status: "placed",
    createdAt: "2026-11-21T12:00:30Z",
    unitPrice: 1999,
    total: 3998,
    currency: "EUR",
    petName: "Rex",
  },
};
// As the service writes it, and with a character outside ASCII, so that bytes and text differ.
const body = JSON.stringify({ ...event, data: { ...event.data, note: "Éclair 🐾" } });

function sign(payload: string | Buffer, key: string, timestamp = t): string {
  return createHmac("sha256", key).update(`${timestamp}.`).update(payload).digest("hex");
}

/** The error a call failed with (the test fails if it did not). */
async function failure(call: Promise<unknown>): Promise<unknown> {
  return call.then(
    (value) => assert.fail(`expected an error, got ${JSON.stringify(value)}`),
    (error: unknown) => error,
  );
}

test("constructEvent returns the event of a delivery signed with the secret, from its text or its bytes", async () => {
  const header = `t=${t},v1=${sign(body, secret)}`;
  const expected = JSON.parse(body) as Event;
  assert.deepEqual(await constructEvent(body, header, secret, { now: at(t) }), expected);
  assert.deepEqual(await constructEvent(Buffer.from(body, "utf8"), header, secret, { now: at(t) }), expected);
  assert.deepEqual(await constructEvent(new TextEncoder().encode(body), header, secret, { now: at(t) }), expected);
  // Spaces after the commas, and keys in another order, are the same header.
  assert.deepEqual(await constructEvent(body, `v1=${sign(body, secret)}, t=${t}`, secret, { now: at(t) }), expected);
});

test("during a rotation overlap the header has a v1 per secret, and either secret verifies it", async () => {
  const header = `t=${t},v1=${sign(body, other)},v1=${sign(body, secret)}`;
  assert.equal((await constructEvent(body, header, secret, { now: at(t) })).id, event.id);
  assert.equal((await constructEvent(body, header, other, { now: at(t) })).id, event.id);
  const third = await failure(constructEvent(body, header, "whsec_neither", { now: at(t) }));
  assert.ok(third instanceof WebhookSignatureError, String(third));
  assert.equal(third.reason, "no_matching_signature");
});

test("a changed body, a changed t or another secret does not verify", async () => {
  const v1 = sign(body, secret);
  const cases: [string, string | Uint8Array, string, string][] = [
    ["a byte of the body changed", body.replace('"quantity":2', '"quantity":3'), `t=${t},v1=${v1}`, secret],
    ["the body parsed and written again", JSON.stringify(JSON.parse(body), null, 1), `t=${t},v1=${v1}`, secret],
    ["a t the signature was not made with", body, `t=${t + 1},v1=${v1}`, secret],
    ["another secret", body, `t=${t},v1=${v1}`, other],
    ["the secret without whsec_", body, `t=${t},v1=${v1}`, secret.slice("whsec_".length)],
    ["a signature cut short", body, `t=${t},v1=${v1.slice(0, 62)}`, secret],
    ["a signature that is not hex", body, `t=${t},v1=${v1.slice(0, 63)}g`, secret],
    ["an empty v1", body, `t=${t},v1=`, secret],
    ["the right HMAC under another scheme (v0, v2 are ignored)", body, `t=${t},v0=${v1},v2=${v1},v1=${"0".repeat(64)}`, secret],
  ];
  for (const [what, payload, header, key] of cases) {
    const error = await failure(constructEvent(payload, header, key, { now: at(t) }));
    assert.ok(error instanceof WebhookSignatureError, `${what}: ${String(error)}`);
    assert.ok(error instanceof WebhookVerificationError);
    assert.equal(error.reason, "no_matching_signature", what);
    assert.equal(error.name, "WebhookSignatureError");
  }
  // Another scheme beside a good v1 is ignored, as is a v1 that cannot match.
  const header = `t=${t},v2=${"ab".repeat(32)},v1=zz,v1=${v1},v0=x`;
  assert.equal((await constructEvent(body, header, secret, { now: at(t) })).id, event.id);
  // A header as Node's http gives it may be a list: one value is the header.
  assert.equal((await constructEvent(body, [`t=${t},v1=${v1}`], secret, { now: at(t) })).id, event.id);
  // Hex digits are read in either case.
  assert.equal((await constructEvent(body, `t=${t},v1=${v1.toUpperCase()}`, secret, { now: at(t) })).id, event.id);
});

test("a missing or malformed Petstore-Signature header is a WebhookHeaderError", async () => {
  const v1 = sign(body, secret);
  for (const header of [undefined, null, "", "  ", []]) {
    const error = await failure(constructEvent(body, header, secret, { now: at(t) }));
    assert.ok(error instanceof WebhookHeaderError, `${String(header)}: ${String(error)}`);
    assert.ok(error instanceof WebhookVerificationError);
    assert.equal(error.reason, "missing_header");
  }
  for (const header of [
    "garbage",
    `v1=${v1}`, // no t
    `t=${t}`, // no v1
    `t=${t},t=${t},v1=${v1}`, // t twice (the header sent twice, joined)
    `t=${t},v1=${v1}, t=${t},v1=${v1}`,
    `t=,v1=${v1}`,
    `t=-${t},v1=${v1}`,
    `t=${t}.5,v1=${v1}`,
    `t=1e9,v1=${v1}`,
    `t=${"9".repeat(16)},v1=${v1}`,
    `t=${t},v1=${v1},=x`,
    `t=${t};v1=${v1}`,
    [`t=${t},v1=${v1}`, `t=${t},v1=${v1}`], // the header sent twice
  ]) {
    const error = await failure(constructEvent(body, header, secret, { now: at(t) }));
    assert.ok(error instanceof WebhookHeaderError, `${String(header)}: ${String(error)}`);
    assert.equal(error.reason, "malformed_header", String(header));
    assert.equal(error.name, "WebhookHeaderError");
  }
});

test("a timestamp further from the clock than the tolerance, either way, is a WebhookTimestampError", async () => {
  const header = `t=${t},v1=${sign(body, secret)}`;
  // 300 seconds either way by default, the bounds included.
  for (const now of [t - 300, t + 300]) {
    assert.equal((await constructEvent(body, header, secret, { now: at(now) })).id, event.id, `now ${now}`);
  }
  for (const now of [t - 301, t + 301, t + 86_400, 0]) {
    const error = await failure(constructEvent(body, header, secret, { now: at(now) }));
    assert.ok(error instanceof WebhookTimestampError, `now ${now}: ${String(error)}`);
    assert.ok(error instanceof WebhookVerificationError);
    assert.equal(error.reason, "timestamp_out_of_tolerance");
    assert.equal(error.timestamp, t);
    assert.equal(error.now, now);
  }
  // A tolerance of one's own; the clock is read in milliseconds and floored to seconds.
  assert.equal((await constructEvent(body, header, secret, { now: () => (t + 10) * 1000 + 999, toleranceSeconds: 10 })).id, event.id);
  const tight = await failure(constructEvent(body, header, secret, { now: at(t + 11), toleranceSeconds: 10 }));
  assert.ok(tight instanceof WebhookTimestampError, String(tight));
  // The time is checked before the signature: a replay of an old, well signed delivery is refused as stale.
  const old = `t=${t - 3600},v1=${sign(body, secret, t - 3600)}`;
  assert.ok((await failure(constructEvent(body, old, secret, { now: at(t) }))) instanceof WebhookTimestampError);
  // Without `now`, the clock is Date.now.
  const fresh = Math.floor(Date.now() / 1000);
  assert.equal((await constructEvent(body, `t=${fresh},v1=${sign(body, secret, fresh)}`, secret)).id, event.id);
  assert.ok((await failure(constructEvent(body, header, secret))) instanceof WebhookTimestampError);
});

test("constructEvent refuses an empty secret or a negative tolerance, and a signed payload that is no event", async () => {
  const header = `t=${t},v1=${sign(body, secret)}`;
  assert.ok((await failure(constructEvent(body, header, "", { now: at(t) }))) instanceof TypeError);
  for (const toleranceSeconds of [-1, Number.NaN]) {
    assert.ok((await failure(constructEvent(body, header, secret, { now: at(t), toleranceSeconds }))) instanceof TypeError);
  }
  const notAnEvent = JSON.stringify({ hello: "world" });
  const error = await failure(constructEvent(notAnEvent, `t=${t},v1=${sign(notAnEvent, secret)}`, secret, { now: at(t) }));
  assert.ok(error instanceof TypeError && !(error instanceof WebhookVerificationError), String(error));
});
