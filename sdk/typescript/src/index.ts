export { basicAuth, bearerAuth, createPetstore } from "./client.js";
export type { AuthCallOptions, CallOptions, Credentials, ListIterator, Page, PageIterator, Petstore, PetstoreOptions, PlaceOrderOptions } from "./client.js";
export { PetstoreError } from "./errors.js";
export { maxPhotoBytes } from "./photos.js";
export type { PhotoBody, PhotoRef } from "./photos.js";
export type { StreamOptions } from "./stream.js";
export type { DeprecationNotice, Fetch } from "./transport.js";
export { knownValues } from "./types.js";
export {
  constructEvent,
  defaultToleranceSeconds,
  WebhookHeaderError,
  WebhookSignatureError,
  WebhookTimestampError,
  WebhookVerificationError,
} from "./webhooks.js";
export type { ConstructEventOptions, WebhookVerificationFailure } from "./webhooks.js";
export type * from "./types.js";
/** The generated types of the whole document, for use with `client.raw`. */
export type { components, operations, paths } from "./schema.js";
