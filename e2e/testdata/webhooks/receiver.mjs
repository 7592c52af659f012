// A webhook receiver in Node.js that checks Petstore-Signature before it trusts a
// delivery. Run: PETSTORE_WEBHOOK_SECRET=whsec_… PORT=4242 node receiver.mjs
import { createHmac, timingSafeEqual } from "node:crypto";
import { createServer } from "node:http";

const secret = process.env.PETSTORE_WEBHOOK_SECRET;
const toleranceSeconds = 300;

// verify returns whether header signs body: a timestamp within the tolerance and one
// v1 (there are two while a rotated secret overlaps) that is the HMAC-SHA256 of
// "<t>.<body>" under the secret. body must be the raw bytes, not re-serialised JSON.
function verify(header, body) {
  const parts = (header ?? "").split(",").map((p) => p.trim().split("="));
  const t = parts.find(([k]) => k === "t")?.[1];
  const signatures = parts.filter(([k]) => k === "v1").map(([, v]) => Buffer.from(v ?? "", "hex"));
  if (!t || !/^\d+$/.test(t) || Math.abs(Date.now() / 1000 - Number(t)) > toleranceSeconds) return false;
  const expected = createHmac("sha256", secret).update(`${t}.`).update(body).digest();
  return signatures.some((s) => s.length === expected.length && timingSafeEqual(s, expected));
}

const seen = new Set(); // event ids already handled: a delivery may come more than once

createServer((req, res) => {
  const chunks = [];
  req.on("data", (c) => chunks.push(c));
  req.on("end", () => {
    const body = Buffer.concat(chunks);
    if (!verify(req.headers["petstore-signature"], body)) {
      res.writeHead(400).end("bad signature");
      return;
    }
    const event = JSON.parse(body.toString("utf8"));
    if (!seen.has(event.id)) {
      seen.add(event.id);
      console.log(`${event.type} ${event.id}`);
    }
    res.writeHead(204).end();
  });
}).listen(Number(process.env.PORT), "127.0.0.1", () => console.log("listening"));
