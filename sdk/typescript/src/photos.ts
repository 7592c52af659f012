// What an upload sends, decided before anything is sent: the type of the photo (given, a
// File's `type`, or its first bytes) and its size; and where a photo is served.
import { knownValues, type Photo, type PhotoSize, type UploadContentType } from "./types.js";

/** The largest photo the service takes (10 MiB); a larger one is refused before it is sent. */
export const maxPhotoBytes = 10 * 1024 * 1024;

/** What `pets.uploadPhoto` takes: a `Blob` (a browser's `File`), or the bytes. */
export type PhotoBody = Blob | ArrayBuffer | Uint8Array;

/**
 * The content type to send `body` with: `contentType` when given, else a Blob's `type`,
 * else what its first bytes are. Throws a `TypeError` for a type the service does not
 * take (it would answer 415), and a `RangeError` for a body past 10 MiB (413), so that
 * neither is sent.
 */
export async function uploadContentType(body: PhotoBody, contentType?: string): Promise<UploadContentType> {
  const size = body instanceof Blob ? body.size : body.byteLength;
  if (size > maxPhotoBytes) {
    throw new RangeError(`petstore: the photo holds ${size} bytes; at most ${maxPhotoBytes} (10 MiB) are taken`);
  }
  let type = (contentType ?? (body instanceof Blob ? body.type : "")).split(";")[0]?.trim().toLowerCase() ?? "";
  let from = contentType === undefined ? "the Blob's type" : "contentType";
  if (type === "") {
    const head =
      body instanceof Blob
        ? new Uint8Array(await body.slice(0, 12).arrayBuffer())
        : body instanceof Uint8Array
          ? body.subarray(0, 12)
          : new Uint8Array(body, 0, Math.min(size, 12));
    type = sniff(head) ?? "";
    from = "its first bytes";
    if (type === "") throw new TypeError("petstore: the photo is neither JPEG, PNG nor WebP by its first bytes; pass its contentType");
  }
  if (!(knownValues.uploadContentType as readonly string[]).includes(type)) {
    throw new TypeError(`petstore: the photo is ${type} by ${from}; the service takes ${knownValues.uploadContentType.join(", ")}`);
  }
  return type as UploadContentType;
}

/** The type of image whose first bytes are `head`, by their magic numbers, or undefined. */
function sniff(head: Uint8Array): UploadContentType | undefined {
  const starts = (bytes: number[], at = 0) => bytes.every((b, i) => head[at + i] === b);
  const ascii = (text: string) => [...text].map((c) => c.charCodeAt(0));
  if (starts([0xff, 0xd8, 0xff])) return "image/jpeg";
  if (starts([0x89, ...ascii("PNG\r\n\x1a\n")])) return "image/png";
  if (starts(ascii("RIFF")) && starts(ascii("WEBP"), 8)) return "image/webp";
  return undefined;
}

/** A photo, or just its id (then the URL is where `pets.getPhoto` fetches it). */
export type PhotoRef = Pick<Photo, "id"> & Partial<Pick<Photo, "urls">>;

/**
 * The absolute URL of one size of a photo: its URL (origin-relative, as the service
 * writes it) resolved against `baseUrl`, or `baseUrl`'s `/photos/{id}/{size}` when the
 * photo's URLs are not known.
 */
export function photoUrl(baseUrl: string, photo: PhotoRef, size: PhotoSize): string {
  const reference = photo.urls?.[size] || `${baseUrl}/photos/${encodeURIComponent(photo.id)}/${encodeURIComponent(size)}`;
  return new URL(reference, `${baseUrl}/`).href;
}
