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
  ],
  deliveryStatus: ["pending", "succeeded", "failed"],
  errorCode: [
    "unauthorized",
    "forbidden",
    "not_found",
    "method_not_allowed",
    "invalid_json",
    "invalid_content_type",
    "validation_failed",
    "conflict",
    "insufficient_stock",
    "invalid_transition",
    "gone",
    "payload_too_large",
    "idempotency_key_reused",
    "rate_limited",
    "internal",
    "not_implemented",
    "unavailable",
  ],
} as const;

/** A pet's status in an answer. */
export type PetStatus = (typeof knownValues.petStatus)[number] | OtherString;
/** An account's role in an answer; treat one you do not know as no more than `customer`. */
export type Role = (typeof knownValues.role)[number] | OtherString;
/** A message's delivery status in an answer. */
export type MessageStatus = (typeof knownValues.messageStatus)[number] | OtherString;
/** An event's type in an answer; ignore an event whose type you do not know. */
export type EventType = (typeof knownValues.eventType)[number] | OtherString;
/** A webhook delivery's status in an answer; treat one you do not know as not delivered. */
export type DeliveryStatus = (typeof knownValues.deliveryStatus)[number] | OtherString;
/** The error codes the document lists. */
export type KnownErrorCode = (typeof knownValues.errorCode)[number];
/** An error code; treat one you do not know by the HTTP status. */
export type ErrorCode = KnownErrorCode | OtherString;
/** What is wrong with which field (`details` of `validation_failed`). */
export type ErrorDetail = Schemas["ErrorDetail"];

export interface Pet extends Omit<Schemas["Pet"], "status"> {
  status: PetStatus;
}
export interface InventoryItem extends Omit<Schemas["InventoryItem"], "status"> {
  status: PetStatus;
}
export interface Account extends Omit<Schemas["Account"], "role"> {
  role: Role;
}
export interface Message extends Omit<Schemas["Message"], "status"> {
  status: MessageStatus;
}
export type Category = Schemas["Category"];
export type Order = Schemas["Order"];
export type ApiKey = Schemas["ApiKey"];
export type CreatedApiKey = Schemas["CreatedApiKey"];

// Requests: closed lists, as the server accepts nothing else.
export type NewAccount = Schemas["NewAccount"];
export type NewApiKey = Schemas["NewApiKey"];
export type NewMessage = Schemas["NewMessage"];
export type NewPet = Schemas["NewPet"];
export type PetPatch = Schemas["PetPatch"];
export type NewCategory = Schemas["NewCategory"];
export type InventoryUpdate = Schemas["InventoryUpdate"];
export type NewOrder = Schemas["NewOrder"];
export type OrderUpdate = Schemas["OrderUpdate"];

export type ListPetsQuery = Query<"listPets">;
export type ListCategoriesQuery = Query<"listCategories">;
export type ListInventoryQuery = Query<"listInventory">;
export type ListOrdersQuery = Query<"listOrders">;
export type ListApiKeysQuery = Query<"listApiKeys">;
