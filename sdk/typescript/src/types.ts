// The models of the API, as the generated types (src/schema.ts) describe them, except that
// values the document lists in an `x-extensible-enum` (an open list: a newer server may
// send a value not listed) are typed as the known values plus any other string. Editors
// suggest the known values; an unknown one is passed through unchanged.
import type { components, operations } from "./schema.js";

type Schemas = components["schemas"];
type Query<Op extends keyof operations> = NonNullable<operations[Op]["parameters"]["query"]>;
/** Any string besides the known ones (keeps the known ones visible to editors). */
type OtherString = string & {};

/** The known values of each open list of the document (its `x-extensible-enum`s). */
export const knownValues = {
  petStatus: ["available", "pending", "sold"],
  orderStatus: ["placed", "completed", "cancelled"],
  role: ["customer", "admin"],
  messageStatus: ["queued"],
  eventType: [
    "order.placed",
    "order.completed",
    "order.cancelled",
    "pet.sold_out",
    "pet.restocked",
    "pet.status_changed",
    "inventory.updated",
    "api_key.created",
    "api_key.revoked",
    "webhook.test",
  ],
  /** What an endpoint subscribes to: "*" (every type) or event types. */
  webhookEvents: [
    "*",
    "order.placed",
    "order.completed",
    "order.cancelled",
    "pet.sold_out",
    "pet.restocked",
    "pet.status_changed",
    "inventory.updated",
    "api_key.created",
    "api_key.revoked",
  ],
  deliveryStatus: ["pending", "succeeded", "failed"],
  /** The scopes an API key may be limited to (the `bearerAuth` scheme's `x-scopes`). */
  scope: [
    "account:read",
    "accounts:read",
    "accounts:manage",
    "keys:manage",
    "messages:read",
    "messages:write",
    "pets:read",
    "pets:write",
    "categories:write",
    "inventory:write",
    "orders:read",
    "orders:write",
    "sales:read",
    "webhooks:manage",
    "events:read",
  ],
  /** Who made a change an `api_key.*` event tells of. */
  actorType: ["key", "password", "operator"],
  /** What a stored photo's original is (`Photo.contentType`). */
  photoContentType: ["image/jpeg", "image/png"],
  /** What `pets.uploadPhoto` sends: the types the service takes. */
  uploadContentType: ["image/jpeg", "image/png", "image/webp"],
  /** Where an account's password came from (`Account.passwordSource`). */
  passwordSource: ["none", "signup", "invitation"],
  errorCode: [
    "unauthorized",
    "forbidden",
    "insufficient_scope",
    "not_found",
    "method_not_allowed",
    "invalid_json",
    "invalid_content_type",
    "validation_failed",
    "conflict",
    "insufficient_stock",
    "invalid_transition",
    "not_for_sale",
    "last_admin",
    "invalid_token",
    "gone",
    "payload_too_large",
    "unsupported_media_type",
    "range_not_satisfiable",
    "invalid_image",
    "request_timeout",
    "idempotency_key_reused",
    "rate_limited",
    "too_many_streams",
    "internal",
    "not_implemented",
    "unavailable",
  ],
} as const;

/** A pet's status in an answer. */
export type PetStatus = (typeof knownValues.petStatus)[number] | OtherString;
/** An order's status in an answer; treat one you do not know as neither completed nor cancelled. */
export type OrderStatus = (typeof knownValues.orderStatus)[number] | OtherString;
/** An account's role in an answer; treat one you do not know as no more than `customer`. */
export type Role = (typeof knownValues.role)[number] | OtherString;
/**
 * Where an account's password came from: `none` (keys alone), `signup` (chosen by whoever
 * signed up; such an account is never made admin), `invitation` (set through an
 * invitation's link). Treat one you do not know as `signup`.
 */
export type PasswordSource = (typeof knownValues.passwordSource)[number] | OtherString;
/** A message's delivery status in an answer. */
export type MessageStatus = (typeof knownValues.messageStatus)[number] | OtherString;
/** An event's type in an answer; ignore an event whose type you do not know. */
export type EventType = (typeof knownValues.eventType)[number] | OtherString;
/** A webhook delivery's status in an answer; treat one you do not know as not delivered. */
export type DeliveryStatus = (typeof knownValues.deliveryStatus)[number] | OtherString;
/** What an endpoint subscribes to, in an answer: "*" (every type) or an event type. */
export type WebhookSubscription = (typeof knownValues.webhookEvents)[number] | OtherString;
/**
 * A scope of an API key in an answer (`ApiKey.scopes`, `PetstoreError.scope`). Requests
 * (`NewApiKey.scopes`) take only the known ones, `KnownScope`.
 */
export type Scope = KnownScope | OtherString;
/** The scopes the document lists; each operation needs one. */
export type KnownScope = (typeof knownValues.scope)[number];
/** The error codes the document lists. */
export type KnownErrorCode = (typeof knownValues.errorCode)[number];
/** An error code; treat one you do not know by the HTTP status. */
export type ErrorCode = KnownErrorCode | OtherString;
/** What is wrong with which field (`details` of `validation_failed`). */
export type ErrorDetail = Schemas["ErrorDetail"];

/** An animal in the store; `photos` are in the order staff gave them, the first the one a list shows. */
export interface Pet extends Omit<Schemas["Pet"], "status" | "photos"> {
  status: PetStatus;
  photos: Photo[];
}
/** The media type of a stored photo's original; `display` and `thumb` are JPEG, or PNG when it has transparency. */
export type PhotoContentType = (typeof knownValues.photoContentType)[number] | OtherString;
/** A type of image the service takes for an upload. */
export type UploadContentType = (typeof knownValues.uploadContentType)[number];
/**
 * A photo of a pet, in three sizes. `urls` are origin-relative (`/v1/photos/ph_…/thumb`),
 * as the service writes them: `client.photoUrl(photo, size)` makes them absolute.
 */
export interface Photo extends Omit<Schemas["Photo"], "contentType"> {
  contentType: PhotoContentType;
}
/** A size of a photo: `thumb` (≤ 400 px, lists), `display` (≤ 1,200 px, a pet's page), `original`. */
export type PhotoSize = keyof Schemas["PhotoUrls"];
/** One size of a photo, as `pets.getPhoto` fetched it. */
export interface PhotoData {
  bytes: Uint8Array;
  /** What the service said the bytes are: `image/jpeg` or `image/png`. */
  contentType: string;
  /** The photo's strong validator; it never changes, as the photo does not. */
  etag: string | undefined;
}
export interface InventoryItem extends Omit<Schemas["InventoryItem"], "status"> {
  status: PetStatus;
}
export interface Account extends Omit<Schemas["Account"], "role" | "passwordSource"> {
  role: Role;
  passwordSource: PasswordSource;
}
/**
 * The API key a call came with, as `accounts.me()` tells it: `scopes` are what it may do
 * now (its own, or every scope of the account's role for a key made without any, and only
 * those the role allows); `expiresAt` is absent when it never expires. Offer an operation
 * only when its scope is in `scopes`.
 */
export interface CallingKey extends Omit<Schemas["CallingKey"], "scopes"> {
  scopes: Scope[];
}
/** The account of the calling key, with that key (`key`, present whenever the call came with a key). */
export interface CurrentAccount extends Account {
  key?: CallingKey;
}
export interface Message extends Omit<Schemas["Message"], "status"> {
  status: MessageStatus;
}
export type Category = Schemas["Category"];
/**
 * An order with its whole life, every field fixed when it happened: `unitPrice`, `total`
 * and `petName` as they were when it was placed. Amounts are integers in the minor unit
 * of `currency` (cents for EUR). An order placed before the service kept prices has no
 * `unitPrice` or `total`.
 */
export interface Order extends Omit<Schemas["Order"], "status"> {
  status: OrderStatus;
}
/** What some orders sold: orders, units and revenue, and the cancelled ones apart. */
export type SalesFigures = Schemas["SalesFigures"];
/** The figures of one group: `day`, `petId` (and `petName`) or `categoryId` (and `categoryName`), by the report's `groupBy`. */
export type SalesGroup = Schemas["SalesGroup"];
/** A sales report: `totals` of the range and `groups`; every revenue is in the minor unit of `currency`. */
export interface SalesReport extends Omit<Schemas["SalesReport"], "groupBy"> {
  groupBy: SalesGroupBy;
}
/** How a sales report groups its figures. */
export type SalesGroupBy = NonNullable<Query<"getSalesReport">["groupBy"]> | OtherString;
/**
 * An API key, without its secret. `scopes` is absent when the key has every scope of its
 * account's role; `expiresAt` when it never expires; `lastUsedAt` (to the minute, up to a
 * minute late) when it has not been used.
 */
export interface ApiKey extends Omit<Schemas["ApiKey"], "scopes"> {
  scopes?: Scope[];
}
/** A new API key, with its secret (`key`), shown only this once. */
export interface CreatedApiKey extends Omit<Schemas["CreatedApiKey"], "scopes"> {
  scopes?: Scope[];
}
/** A webhook endpoint, without its secret. */
export interface Webhook extends Omit<Schemas["Webhook"], "events"> {
  events: WebhookSubscription[];
}
/** A webhook endpoint with its signing secret, shown only when it is made or rotated. */
export interface WebhookWithSecret extends Webhook {
  /** The key of the deliveries' signatures (`whsec_…`); never shown again: keep it for `constructEvent`. */
  secret: string;
}
/** The sending of one event to one endpoint, over one or more attempts. */
export interface Delivery extends Omit<Schemas["Delivery"], "eventType" | "status"> {
  eventType: EventType;
  status: DeliveryStatus;
}
/**
 * Something that happened: the body of every webhook delivery, and an entry of the feed.
 * `data` is the resource as the API showed it then; choose it by `type`, not by its shape:
 * an `Order` for `order.*`, an `InventoryItem` for `pet.sold_out`, `pet.restocked` and
 * `inventory.updated`, a `Pet` for `pet.status_changed`, an `ApiKeyChange` for
 * `api_key.created` and `api_key.revoked`, a `Webhook` for `webhook.test`.
 */
export interface Event extends Omit<Schemas["Event"], "type" | "data"> {
  type: EventType;
  data: Order | InventoryItem | Pet | Webhook | ApiKeyChange;
}
/** Who made a change: a request with a key or a password of `accountId`, or the operator. */
export type ActorType = (typeof knownValues.actorType)[number] | OtherString;
export interface Actor extends Omit<Schemas["Actor"], "type"> {
  type: ActorType;
}
/** The data of `api_key.created` and `api_key.revoked`: the key (never its secret), its account and who acted. */
export interface ApiKeyChange extends Omit<Schemas["ApiKeyChange"], "actor" | "scopes"> {
  scopes?: Scope[];
  actor: Actor;
}

/**
 * A signed-in person: the account, and a key made for the session (12 hours,
 * `key.expiresAt`), whose secret `key.key` is shown this once. Sign out by revoking it.
 */
export interface Session {
  account: Account;
  key: CreatedApiKey;
}
/** An invitation; `url` is its one-time link (7 days), shown this once; `mailed` says whether the server mailed it. */
export interface Invitation extends Omit<Schemas["Invitation"], "role"> {
  role: Role;
}

// Requests: closed lists, as the server accepts nothing else.
export type NewAccount = Schemas["NewAccount"];
/** Email and password; `scopes` narrow the session's key (left out: every scope of the role). */
export type NewSession = Schemas["NewSession"];
/** Whom to invite; `role` is `admin` unless it says `customer`. */
export type NewInvitation = Schemas["NewInvitation"];
/** An invitation's token (`psi_…`, from its link) and the password to choose. */
export type InvitationAcceptance = Schemas["InvitationAcceptance"];
/** A reset link's token (`psr_…`) and the new password. */
export type PasswordResetConfirmation = Schemas["PasswordResetConfirmation"];
/** A JSON merge patch of an account (admins): `role`, `disabled`; fields left out keep their value. */
export type AccountPatch = Schemas["AccountPatch"];
/**
 * A key to make. Without `scopes` it has every scope of the account's role (or of the key
 * that makes it); without `expiresAt` it lives as long as the operator allows. `expiresAt`
 * is a `Date` or an RFC 3339 string.
 */
export interface NewApiKey extends Omit<Schemas["NewApiKey"], "expiresAt"> {
  expiresAt?: Date | string;
}
export type NewMessage = Schemas["NewMessage"];
export type NewPet = Schemas["NewPet"];
/** A JSON merge patch: fields left out keep their value; `price: null` takes the price away. */
export type PetPatch = Schemas["PetPatch"];
export type NewCategory = Schemas["NewCategory"];
export type InventoryUpdate = Schemas["InventoryUpdate"];
export type NewOrder = Schemas["NewOrder"];
export type OrderUpdate = Schemas["OrderUpdate"];
export type NewWebhook = Schemas["NewWebhook"];
/** A JSON merge patch: fields left out keep their value; `description: null` removes it. */
export type WebhookPatch = Schemas["WebhookPatch"];
/** `overlapSeconds`: how long the replaced secret keeps signing (0 to 86 400, the default). */
export type SecretRotation = Schemas["SecretRotation"];

export type ListAccountsQuery = Query<"listAccounts">;
export type ListPetsQuery = Query<"listPets">;
export type ListCategoriesQuery = Query<"listCategories">;
export type ListInventoryQuery = Query<"listInventory">;
/** `status`, `complete`, `createdAfter`/`createdBefore` (RFC 3339), `accountId` (admins) and `sort` (`newest`, the default, or `oldest`). */
export type ListOrdersQuery = Query<"listOrders">;
/** `from` and `to` (UTC days, `YYYY-MM-DD`, both included), `groupBy` (`day`, `pet`, `category`) and `limit` (groups, for `pet` and `category`). */
export type SalesReportQuery = Query<"getSalesReport">;
export type ListApiKeysQuery = Query<"listApiKeys">;
export type ListWebhooksQuery = Query<"listWebhooks">;
export type ListDeliveriesQuery = Query<"listDeliveries">;
export type ListEventsQuery = Query<"listEvents">;
/** `type` keeps one type; `lastEventId` resumes after that event. */
export type StreamEventsQuery = Query<"streamEvents">;
