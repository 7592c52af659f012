// Photos: what an upload sends (its type from the caller, a File's type or the bytes;
// refused before sending otherwise; never sent twice), where photoUrl points, and the
// whole life of a pet's photos against the real server (PETSTORE_BIN).
import assert from "node:assert/strict";
import { after, afterEach, before, test } from "node:test";
import { deflateSync } from "node:zlib";
import { createPetstore, maxPhotoBytes, PetstoreError, type Petstore, type PhotoBody } from "@acme-pets/petstore";
import { startPetstore, type Server } from "./harness.js";
import { json, startStub, type Stub } from "./stub.js";

/** A w×h RGB PNG with a gradient, built by hand: signature, IHDR, IDAT (zlib), IEND. */
function png(w: number, h: number): Uint8Array<ArrayBuffer> {
  const crcTable = Array.from({ length: 256 }, (_, n) => {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    return c >>> 0;
  });
  const crc32 = (bytes: Uint8Array) => {
    let c = 0xffffffff;
    for (const b of bytes) c = (crcTable[(c ^ b) & 0xff] ?? 0) ^ (c >>> 8);
    return (c ^ 0xffffffff) >>> 0;
  };
  const chunk = (type: string, data: Uint8Array) => {
    const out = new Uint8Array(12 + data.length);
    const view = new DataView(out.buffer);
    view.setUint32(0, data.length);
    out.set(new TextEncoder().encode(type), 4);
    out.set(data, 8);
    view.setUint32(8 + data.length, crc32(out.subarray(4, 8 + data.length)));
    return out;
  };
  const header = new Uint8Array(13);
  new DataView(header.buffer).setUint32(0, w);
  new DataView(header.buffer).setUint32(4, h);
  header.set([8, 2, 0, 0, 0], 8); // 8 bits, RGB, deflate, no filter, no interlace
  const rows = new Uint8Array(h * (1 + 3 * w));
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) rows.set([(x * 255) / w, (y * 255) / h, 128], y * (1 + 3 * w) + 1 + 3 * x); // filter byte 0 first
  }
  const parts = [
    new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk("IHDR", header),
    chunk("IDAT", new Uint8Array(deflateSync(rows))),
    chunk("IEND", new Uint8Array()),
  ];
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  parts.reduce((at, p) => (out.set(p, at), at + p.length), 0);
  return out;
}

/** The width and height an image's PNG header or JPEG frame says. */
function dimensions(bytes: Uint8Array): [number, number] {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (bytes[0] === 0x89) return [view.getUint32(16), view.getUint32(20)];
  for (let i = 2; i + 9 < bytes.length; ) {
    const marker = bytes[i + 1] ?? 0;
    if (marker >= 0xc0 && marker <= 0xc3) return [view.getUint16(i + 7), view.getUint16(i + 5)];
    i += 2 + view.getUint16(i + 2);
  }
  throw new Error("no image dimensions found");
}

const jpegHead = new Uint8Array([0xff, 0xd8, 0xff, 0xe0, 0, 0x10]);
const webpHead = new TextEncoder().encode("RIFF\x24\x00\x00\x00WEBPVP8 ");
const photo = {
  id: "ph_2ocjcdj23o2hkliy2weuirxv2a",
  width: 1,
  height: 1,
  contentType: "image/jpeg",
  urls: { thumb: "/v1/photos/ph_2ocjcdj23o2hkliy2weuirxv2a/thumb", display: "/v1/photos/ph_2ocjcdj23o2hkliy2weuirxv2a/display", original: "/v1/photos/ph_2ocjcdj23o2hkliy2weuirxv2a/original" },
};

let stub: Stub | undefined;
afterEach(async () => {
  await stub?.close();
  stub = undefined;
});

test("uploadPhoto sends the given type, else a File's type, else the bytes' type; as is, with its length", async () => {
  const cases: { name: string; body: PhotoBody; contentType?: "image/jpeg" | "image/png" | "image/webp"; want: string }[] = [
    { name: "JPEG bytes", body: jpegHead, want: "image/jpeg" },
    { name: "PNG bytes in an ArrayBuffer", body: png(2, 2).slice().buffer, want: "image/png" },
    { name: "WebP bytes at an offset of their buffer", body: new Uint8Array([0, ...webpHead]).subarray(1), want: "image/webp" },
    { name: "a File's type", body: new Blob([jpegHead], { type: "image/png" }), want: "image/png" },
    { name: "a File without a type: its bytes", body: new Blob([webpHead]), want: "image/webp" },
    { name: "the given type over the File's", body: new Blob([jpegHead], { type: "image/png" }), contentType: "image/jpeg", want: "image/jpeg" },
  ];
  stub = await startStub((_req, res) => json(res, 201, photo, { Location: photo.urls.original }));
  const client = createPetstore({ baseUrl: stub.baseUrl, apiKey: "psk_test" });
  for (const { name, body, contentType, want } of cases) {
    assert.deepEqual(await client.pets.uploadPhoto(7, body, contentType), photo, name);
    const sent = stub.requests.at(-1);
    const length = body instanceof Blob ? body.size : body.byteLength;
    assert.equal(sent?.url, "/v1/pets/7/photos", name);
    assert.equal(sent?.headers["content-type"], want, name);
    assert.equal(sent?.headers["content-length"], String(length), name);
    assert.equal(sent?.headers.authorization, "Bearer psk_test", name);
  }
});

test("uploadPhoto refuses, before sending anything, a type the service does not take and a body past 10 MiB", async () => {
  const cases: { name: string; body: PhotoBody; contentType?: string; error: typeof TypeError | typeof RangeError }[] = [
    { name: "a GIF File", body: new Blob(["GIF89a"], { type: "image/gif" }), error: TypeError },
    { name: "bytes of no photo", body: new TextEncoder().encode("<html>"), error: TypeError },
    { name: "an empty body", body: new Uint8Array(), error: TypeError },
    { name: "a type given that the service does not take", body: jpegHead, contentType: "image/heic", error: TypeError },
    { name: "11 MiB", body: new Uint8Array(maxPhotoBytes + 1).fill(0xff), error: RangeError },
  ];
  stub = await startStub((_req, res) => json(res, 201, photo));
  const client = createPetstore({ baseUrl: stub.baseUrl, apiKey: "psk_test" });
  for (const { name, body, contentType, error } of cases) {
    await assert.rejects(client.pets.uploadPhoto(7, body, contentType as "image/jpeg"), error, name);
  }
  assert.equal(stub.requests.length, 0);
});

test("an upload answered 503 is not sent again: a second attempt could store the photo twice", async () => {
  stub = await startStub((_req, res) => json(res, 503, { code: "unavailable", message: "Busy.", status: 503 }, { "Retry-After": "1" }));
  const client = createPetstore({ baseUrl: stub.baseUrl, apiKey: "psk_test", retries: 3 });
  const error = await client.pets.uploadPhoto(7, jpegHead).catch((e: unknown) => e);
  assert.ok(error instanceof PetstoreError && error.status === 503 && error.retryAfter === 1, String(error));
  assert.equal(stub.requests.length, 1);
});

test("photoUrl resolves a photo's origin-relative URL against baseUrl", () => {
  const cases: { baseUrl: string; ref: Parameters<Petstore["photoUrl"]>[0]; size: "thumb" | "display" | "original"; want: string }[] = [
    { baseUrl: "http://localhost:8080/v1", ref: photo, size: "thumb", want: `http://localhost:8080${photo.urls.thumb}` },
    { baseUrl: "https://shop.example.com/v1/", ref: photo, size: "display", want: `https://shop.example.com${photo.urls.display}` },
    { baseUrl: "http://localhost:8080/v1", ref: { ...photo, urls: { ...photo.urls, original: "https://cdn.example.com/x" } }, size: "original", want: "https://cdn.example.com/x" },
    { baseUrl: "https://shop.example.com/api/v1", ref: { id: photo.id }, size: "thumb", want: `https://shop.example.com/api/v1/photos/${photo.id}/thumb` },
  ];
  for (const { baseUrl, ref, size, want } of cases) {
    assert.equal(createPetstore({ baseUrl }).photoUrl(ref, size), want);
  }
});

let server: Server;
before(async () => {
  server = await startPetstore();
});
after(async () => {
  await server?.stop();
});

test("against the server: two photos uploaded, on the pet, the thumb public, swapped, one removed", async () => {
  const admin = createPetstore({ baseUrl: server.baseUrl, apiKey: server.adminKey });
  const anyone = createPetstore({ baseUrl: server.baseUrl });
  const category = await admin.categories.create({ name: "Photogenic" });
  const pet = await admin.pets.create({ name: "Snap", categoryId: category.id });
  assert.deepEqual(pet.photos, []);

  // A File (its type) and bytes (sniffed).
  const first = await admin.pets.uploadPhoto(pet.id, new File([png(640, 480)], "snap.png", { type: "image/png" }));
  const second = await admin.pets.uploadPhoto(pet.id, png(300, 500));
  assert.deepEqual([first.width, first.height, first.contentType], [640, 480, "image/png"]);
  assert.equal(first.urls.thumb, `/v1/photos/${first.id}/thumb`);
  assert.deepEqual([second.width, second.height], [300, 500]);
  const [listed] = await admin.pets.pages({ ids: [pet.id] }).next().then((r) => (r.done ? [] : r.value.items));
  assert.deepEqual(listed?.photos, [first, second]);

  // The thumb, without a key: at photoUrl and through getPhoto. No transparency: a JPEG.
  const atUrl = await fetch(anyone.photoUrl(first, "thumb"));
  assert.equal(atUrl.status, 200);
  const fetched = new Uint8Array(await atUrl.arrayBuffer());
  const thumb = await anyone.pets.getPhoto(first.id, "thumb");
  assert.equal(thumb.contentType, "image/jpeg");
  assert.match(thumb.etag ?? "", /^"/);
  assert.deepEqual(thumb.bytes, fetched);
  assert.deepEqual(dimensions(thumb.bytes), [400, 300]);

  const swapped = await admin.pets.reorderPhotos(pet.id, [second.id, first.id]);
  assert.deepEqual(swapped.photos.map((p) => p.id), [second.id, first.id]);
  await admin.pets.deletePhoto(pet.id, second.id);
  const [remaining] = await admin.pets.pages({ ids: [pet.id] }).next().then((r) => (r.done ? [] : r.value.items));
  assert.deepEqual(remaining?.photos.map((p) => p.id), [first.id]);
  const gone = await anyone.pets.getPhoto(second.id, "display").catch((e: unknown) => e);
  assert.ok(gone instanceof PetstoreError && gone.code === "not_found", String(gone));

  // A PNG declared as a JPEG: the service reads the bytes.
  const lying = await admin.pets.uploadPhoto(pet.id, png(8, 8), "image/jpeg").catch((e: unknown) => e);
  assert.ok(lying instanceof PetstoreError && lying.status === 415 && lying.code === "unsupported_media_type", String(lying));

  await admin.pets.delete(pet.id);
  await admin.categories.delete(category.id);
});
