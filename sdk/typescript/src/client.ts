import createClient, { type Client, type Middleware } from "openapi-fetch";
import { PetstoreError } from "./errors.js";
import type { paths } from "./schema.js";
import type {
  Account,
  AccountPatch,
  CurrentAccount,
  ApiKey,
  Category,
  CreatedApiKey,
  Delivery,
  Event,
  InventoryItem,
  InventoryUpdate,
  ListAccountsQuery,
  ListApiKeysQuery,
  ListCategoriesQuery,
  ListDeliveriesQuery,
  ListEventsQuery,
  StreamEventsQuery,
  ListInventoryQuery,
  ListOrdersQuery,
  ListPetsQuery,
  ListWebhooksQuery,
  Message,
  Invitation,
  InvitationAcceptance,
  NewAccount,
  NewInvitation,
  NewSession,
  PasswordResetConfirmation,
  Session,
  NewApiKey,
  NewCategory,
  NewMessage,
  NewOrder,
  NewPet,
  NewWebhook,
  Order,
  OrderUpdate,
  Pet,
  PetPatch,
  Photo,
  PhotoData,
  PhotoSize,
  UploadContentType,
  SalesReport,
  SalesReportQuery,
  SecretRotation,
  Webhook,
  WebhookPatch,
  WebhookWithSecret,
} from "./types.js";
import { photoUrl, uploadContentType, type PhotoBody, type PhotoRef } from "./photos.js";
import { streamEvents, type StreamOptions } from "./stream.js";
import { deprecationMiddleware, linkTarget, retryingFetch, warnOncePerOperation, type DeprecationNotice, type Fetch } from "./transport.js";

/** The items of a list, page after page, following `Link: <…>; rel="next"`. */
export type ListIterator<T> = AsyncGenerator<T, void, undefined>;

/** One page of a list, as the service answered it. */
export interface Page<T> {
  items: T[];
  /** Whether another page follows (the answer had a `Link: <…>; rel="next"`). */
  hasNext: boolean;
}

/**
 * The pages of a list, one request per page, following `Link: <…>; rel="next"`: for a
 * screen that shows a page and offers the next one (pull the next page when asked).
 */
export type PageIterator<T> = AsyncGenerator<Page<T>, void, undefined>;

/** An `Authorization` header value; make one with `basicAuth` or `bearerAuth`. */
export interface Credentials {
  readonly authorization: string;
}

/** HTTP Basic with an account's email and password (accepted only by the `apiKeys` calls). */
export function basicAuth(email: string, password: string): Credentials {
  const bytes = new TextEncoder().encode(`${email}:${password}`);
  return { authorization: `Basic ${btoa(String.fromCharCode(...bytes))}` };
}

/** An API key (`psk_…`) sent as `Authorization: Bearer <key>`. */
export function bearerAuth(apiKey: string): Credentials {
  return { authorization: `Bearer ${apiKey}` };
}

/**
 * Refuses a base URL the calls cannot be built on: not absolute http(s), or holding a
 * query, a fragment or credentials, which would end up in the wrong place of every
 * request (or in logs).
 */
function checkBaseUrl(baseUrl: string): void {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw new TypeError(`createPetstore: baseUrl ${JSON.stringify(baseUrl)} is not an absolute URL`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new TypeError(`createPetstore: baseUrl ${JSON.stringify(baseUrl)} is not an http(s) URL`);
  }
  if (baseUrl.includes("?") || baseUrl.includes("#") || url.username !== "" || url.password !== "") {
    throw new TypeError(
      `createPetstore: baseUrl ${JSON.stringify(baseUrl)} may not hold a query, a fragment or credentials; pass the key as apiKey`,
    );
  }
}

export interface PetstoreOptions {
  /** The API's root, with the version: `http://localhost:8080/v1`. */
  baseUrl: string;
  /** The API key sent on every call (a call's `auth` option overrides it). */
  apiKey?: string;
  /** The fetch to use (defaults to `globalThis.fetch`). */
  fetch?: Fetch;
  /** How many times a repeatable request is tried again after a network error, 429 or 503 (default 2; 0 turns retries off). */
  retries?: number;
  /** Longest wait before a retry in milliseconds (default 60 000; a timer's longest, 2^31-1, at most); a longer `Retry-After` is thrown as a `PetstoreError`. */
  maxRetryDelayMs?: number;
  /** Called for every answer of a deprecated operation (default: one `console.warn` per operation). */
  onDeprecation?: (notice: DeprecationNotice) => void;
}

export interface CallOptions {
  /** Aborts the call, retries and the waits between them included. */
  signal?: AbortSignal;
}

export interface AuthCallOptions extends CallOptions {
  /** Credentials for this call only, e.g. `basicAuth(email, password)`. */
  auth?: Credentials;
}

export interface PlaceOrderOptions extends CallOptions {
  /** Defaults to a new `crypto.randomUUID()`; every retry of this call sends the same key. */
  idempotencyKey?: string;
}

/** A Pet Store client. Every call throws `PetstoreError` for an answer that is not 2xx. */
export interface Petstore {
  accounts: {
    /** Open an account (no key needed); every new account is a `customer`. */
    create(account: NewAccount, options?: CallOptions): Promise<Account>;
    /** The account of the client's key, with its role and the key (`key`: its scopes and expiry): checks the key (a 401 `PetstoreError` when it is missing, unknown or revoked), tells an admin's from a customer's, and what the key may do. */
    me(options?: CallOptions): Promise<CurrentAccount>;
    /**
     * Accounts by id (admins, with `accounts:read`): who is behind an order's `accountId`.
     * `ids` is the batch lookup (ids of no account are left out); without it, every account.
     */
    list(query?: ListAccountsQuery, options?: CallOptions): ListIterator<Account>;
    pages(query?: ListAccountsQuery, options?: CallOptions): PageIterator<Account>;
    /**
     * Change an account's role or disable it (admins, with `accounts:manage`). A disabled
     * account's keys stop at once (within a second on other servers) and its password
     * no longer signs in; the last enabled admin is neither demoted nor disabled (409
     * `last_admin`).
     */
    update(accountId: number, patch: AccountPatch, options?: CallOptions): Promise<Account>;
  };
  sessions: {
    /**
     * Sign in with email and password (no key needed): a `Session`, whose `key.key` the
     * client then uses. A wrong email or password, an account without a password and a
     * disabled account are one 401 `unauthorized`.
     */
    create(session: NewSession, options?: CallOptions): Promise<Session>;
  };
  invitations: {
    /** Invite a person by email to a role (admins, with `accounts:manage`); `url` is the one-time link. 409 `conflict` for an account that has a password. */
    create(invitation: NewInvitation, options?: CallOptions): Promise<Invitation>;
    /** Choose the password of an invitation's account with its link's token, and sign in (no key needed); a token that will not do is a 400 `invalid_token`. */
    accept(acceptance: InvitationAcceptance, options?: CallOptions): Promise<Session>;
  };
  passwordResets: {
    /** Ask for a reset link by mail (no key needed); the same answer for every email. A server without mail answers 503 `unavailable`. */
    request(email: string, options?: CallOptions): Promise<{ message: string }>;
    /** Set a new password with a reset link's token, and sign in; the account's other sessions end. A token that will not do is a 400 `invalid_token`. */
    confirm(confirmation: PasswordResetConfirmation, options?: CallOptions): Promise<Session>;
  };
  apiKeys: {
    /**
     * Make an API key; authenticate with `{ auth: basicAuth(email, password) }` or a key.
     * Give it only the `scopes` its program needs and an `expiresAt` (a `Date` or an RFC 3339
     * string): a call outside its scopes throws a `PetstoreError` `insufficient_scope` whose
     * `scope` names the scope needed. A scope the role does not allow, or that the key making
     * the call lacks, is a `validation_failed`; so is an expiry past the operator's longest
     * lifetime or the making key's own.
     */
    create(key: NewApiKey, options?: AuthCallOptions): Promise<CreatedApiKey>;
    list(query?: ListApiKeysQuery, options?: AuthCallOptions): ListIterator<ApiKey>;
    pages(query?: ListApiKeysQuery, options?: AuthCallOptions): PageIterator<ApiKey>;
    revoke(keyId: number, options?: AuthCallOptions): Promise<void>;
  };
  messages: {
    /** The getting-started call: proves that the key works. */
    send(message: NewMessage, options?: CallOptions): Promise<Message>;
    get(messageId: string, options?: CallOptions): Promise<Message>;
  };
  pets: {
    /** Pets by id; `ids` is the batch lookup. */
    list(query?: ListPetsQuery, options?: CallOptions): ListIterator<Pet>;
    pages(query?: ListPetsQuery, options?: CallOptions): PageIterator<Pet>;
    /** @deprecated Use `pets.list({ ids: [petId] })`; this operation has a sunset date. */
    get(petId: number, options?: CallOptions): Promise<Pet>;
    create(pet: NewPet, options?: CallOptions): Promise<Pet>;
    replace(petId: number, pet: NewPet, options?: CallOptions): Promise<Pet>;
    update(petId: number, patch: PetPatch, options?: CallOptions): Promise<Pet>;
    delete(petId: number, options?: CallOptions): Promise<void>;
    /**
     * Add a photo to a pet, last in its order (admins): the image as it is, JPEG, PNG or
     * WebP, at most 10 MiB. Its type is `contentType`, else a `Blob`'s (a `File`'s)
     * `type`, else what its first bytes are; another type or a larger body throws
     * (`TypeError`, `RangeError`) before anything is sent. The service checks the bytes
     * (`unsupported_media_type` for a type that lies, `invalid_image` for a truncated one,
     * `conflict` for a ninth photo). Never retried: a second attempt could store it twice.
     */
    uploadPhoto(petId: number, body: PhotoBody, contentType?: UploadContentType, options?: CallOptions): Promise<Photo>;
    /** Put a pet's photos in order (admins): every photo id of the pet, once; anything else is a `conflict` and changes nothing. */
    reorderPhotos(petId: number, photoIds: string[], options?: CallOptions): Promise<Pet>;
    /** Remove a photo of a pet (admins); its URLs answer 404 soon after (a cache may show it a while longer). */
    deletePhoto(petId: number, photoId: string, options?: CallOptions): Promise<void>;
    /** One size of a photo, its bytes (public: a client without a key may). For an `<img>`, use `photoUrl`. */
    getPhoto(photoId: string, size: PhotoSize, options?: CallOptions): Promise<PhotoData>;
  };
  /**
   * The absolute URL of one size of a photo, for an `<img>` or a download: the photo's
   * origin-relative URL (`/v1/photos/ph_…/thumb`) resolved against `baseUrl`. Photos are
   * public: the URL needs no key.
   */
  photoUrl(photo: PhotoRef, size: PhotoSize): string;
  categories: {
    list(query?: ListCategoriesQuery, options?: CallOptions): ListIterator<Category>;
    pages(query?: ListCategoriesQuery, options?: CallOptions): PageIterator<Category>;
    get(categoryId: number, options?: CallOptions): Promise<Category>;
    create(category: NewCategory, options?: CallOptions): Promise<Category>;
    replace(categoryId: number, category: NewCategory, options?: CallOptions): Promise<Category>;
    delete(categoryId: number, options?: CallOptions): Promise<void>;
  };
  inventory: {
    list(query?: ListInventoryQuery, options?: CallOptions): ListIterator<InventoryItem>;
    pages(query?: ListInventoryQuery, options?: CallOptions): PageIterator<InventoryItem>;
    get(petId: number, options?: CallOptions): Promise<InventoryItem>;
    set(petId: number, update: InventoryUpdate, options?: CallOptions): Promise<InventoryItem>;
  };
  orders: {
    list(query?: ListOrdersQuery, options?: CallOptions): ListIterator<Order>;
    pages(query?: ListOrdersQuery, options?: CallOptions): PageIterator<Order>;
    /** Place an order with an `Idempotency-Key`, retried safely with the same key. */
    place(order: NewOrder, options?: PlaceOrderOptions): Promise<Order>;
    get(orderId: number, options?: CallOptions): Promise<Order>;
    update(orderId: number, update: OrderUpdate, options?: CallOptions): Promise<Order>;
    /** Cancels a placed order: it stays, `status: "cancelled"`; cancelling it again changes nothing. */
    cancel(orderId: number, options?: CallOptions): Promise<void>;
  };
  sales: {
    /**
     * What the shop sold from `from` to `to` (admins, with `sales:read`): per day (a day
     * without orders is left out: count it as 0), per pet or per category; the cancelled
     * orders apart. Without a query, the last 30 days by day.
     */
    report(query?: SalesReportQuery, options?: CallOptions): Promise<SalesReport>;
  };
  /**
   * Webhook endpoints, which are sent signed events as they happen (admin only: a
   * customer's key gets a 403 `forbidden`). Check every delivery with `constructEvent`.
   */
  webhooks: {
    /** Endpoints by id, without their secrets. */
    list(query?: ListWebhooksQuery, options?: CallOptions): ListIterator<Webhook>;
    pages(query?: ListWebhooksQuery, options?: CallOptions): PageIterator<Webhook>;
    /**
     * Register an endpoint, enabled, for `events`: types, or `["*"]` (alone) for every type,
     * those added later included. The URL is `https://` on a public address (private and
     * loopback ones, over `http://` too, only when the operator allows them); a URL that
     * may not be used is a `validation_failed` on `url`, a 101st endpoint a `conflict`. The
     * answer's `secret` is shown only here (and on rotation): keep it for `constructEvent`.
     */
    create(webhook: NewWebhook, options?: CallOptions): Promise<WebhookWithSecret>;
    /** The endpoint without its secret: `enabled`, why the service disabled it, since when it fails, until when a rotated secret still signs. */
    get(webhookId: number, options?: CallOptions): Promise<Webhook>;
    /**
     * A JSON merge patch: fields left out keep their value, `description: null` removes it.
     * `enabled: false` stops deliveries (the pending ones fail); `enabled: true` enables an
     * endpoint again (retry the failed deliveries you still want with `deliveries.retry`).
     */
    update(webhookId: number, patch: WebhookPatch, options?: CallOptions): Promise<Webhook>;
    /** Removes the endpoint and its deliveries; its events stay in the feed. */
    delete(webhookId: number, options?: CallOptions): Promise<void>;
    /**
     * A new signing secret, shown only in this answer. The replaced one keeps signing for
     * `overlapSeconds` (default 86 400, 24 hours; `previousSecretExpiresAt`), so deliveries
     * carry one `v1` per secret and the receiver may switch at any time within the overlap;
     * `{ overlapSeconds: 0 }` revokes a leaked secret at once. Never retried.
     */
    rotateSecret(webhookId: number, rotation?: SecretRotation, options?: CallOptions): Promise<WebhookWithSecret>;
    /**
     * Sends a `webhook.test` event (its `data` is the endpoint) to this endpoint only, enabled
     * or not, whatever it subscribes to; answers the pending delivery. The event is not in
     * the feed. With 10 test deliveries pending, a `conflict`. Never retried.
     */
    sendTest(webhookId: number, options?: CallOptions): Promise<Delivery>;
  };
  /** The deliveries of a webhook endpoint (admin only). */
  deliveries: {
    /**
     * The endpoint's deliveries, oldest first: status, attempts, the last answer or error,
     * when the next attempt is due. An event is listed once it is being sent; a delivery that
     * succeeded at its first attempt is `attempts: 1` without `lastAttemptAt`.
     */
    list(webhookId: number, query?: ListDeliveriesQuery, options?: CallOptions): ListIterator<Delivery>;
    pages(webhookId: number, query?: ListDeliveriesQuery, options?: CallOptions): PageIterator<Delivery>;
    /**
     * Makes a `failed` delivery `pending` again, due at once, with a fresh 72 hours of
     * retries; a `succeeded` one is sent again (receivers dedupe by event id); a `pending`
     * one is left as it is. A delivery of a disabled endpoint is a `conflict`: enable the
     * endpoint first. Never retried.
     */
    retry(webhookId: number, deliveryId: number, options?: CallOptions): Promise<Delivery>;
  };
  /** The pull feed of events (admin only), for consumers that cannot receive webhooks. */
  events: {
    /**
     * The feed, oldest first, with the ids and bodies endpoints are sent (`webhook.test`
     * excepted); `type` keeps one type. Every page that holds events links to the next, so
     * the list ends at the first empty page: you are caught up. Events are kept 30 days.
     */
    list(query?: ListEventsQuery, options?: CallOptions): ListIterator<Event>;
    pages(query?: ListEventsQuery, options?: CallOptions): PageIterator<Event>;
    /** One event of the feed; a `webhook.test` event or one past the retention is a `not_found`. */
    get(eventId: string, options?: CallOptions): Promise<Event>;
    /**
     * The events as they are committed, live (`GET /events/stream`): the feed's events,
     * with the same ids and bodies. A dropped connection is opened again after the last
     * event yielded (`Last-Event-ID`), so each event comes once, in order; keep the last
     * `id` and pass it as `lastEventId` to go on after a restart. Ends when `signal`
     * aborts; throws `PetstoreError` for an answer no reconnection cures (a revoked key).
     */
    stream(query?: StreamEventsQuery, options?: StreamOptions): AsyncGenerator<Event, void, undefined>;
  };
  /** The underlying openapi-fetch client (same key, retries and deprecation handling), for anything else. */
  raw: Client<paths>;
}

interface Result<T> {
  data?: T;
  error?: unknown;
  response: Response;
}

/** The data of a 2xx answer; a `PetstoreError` for any other. */
async function unwrap<T>(pending: Promise<Result<T>>): Promise<T> {
  const { data, error, response } = await pending;
  if (!response.ok) throw PetstoreError.fromResponse(response, error);
  return data as T;
}

export function createPetstore(options: PetstoreOptions): Petstore {
  const baseUrl = options.baseUrl.replace(/\/+$/, "");
  checkBaseUrl(baseUrl);
  if (options.apiKey === "") {
    // It would go out as a bare "Authorization: Bearer ", which every call answers 401.
    throw new TypeError("createPetstore: apiKey is empty");
  }
  const fetch: Fetch = options.fetch ?? ((request) => globalThis.fetch(request));
  const raw = createClient<paths>({
    baseUrl,
    fetch: retryingFetch(fetch, {
      retries: options.retries ?? 2,
      baseDelayMs: 200,
      maxDelayMs: options.maxRetryDelayMs ?? 60_000,
    }),
    headers: options.apiKey === undefined ? {} : { Authorization: bearerAuth(options.apiKey).authorization },
  });
  raw.use(deprecationMiddleware(options.onDeprecation ?? warnOncePerOperation()));

  const init = ({ signal, auth }: AuthCallOptions = {}) => ({
    signal,
    headers: auth === undefined ? {} : { Authorization: auth.authorization },
  });

  /**
   * Yields the first page, then follows each `rel="next"` link with the same headers. A
   * link back to a page already fetched ends the list with an error, not a loop; so does a
   * link to another origin than the first page's (it would get the key).
   */
  async function* pages<T>(page: (middleware: Middleware[]) => Promise<Result<T[]>>): PageIterator<T> {
    const fetched = new Set<string>(); // the URLs of the pages so far
    let origin: string | undefined; // the first page's, where the key went
    let next: string | undefined;
    for (;;) {
      let requested = "";
      const { data, error, response } = await page([
        {
          onRequest: ({ request }) => {
            // After the first page: the link's URL, with the first page's headers and signal.
            const sent = next === undefined ? request : new Request(next, { method: request.method, headers: request.headers, signal: request.signal });
            requested = sent.url;
            return sent;
          },
        },
      ]);
      if (!response.ok) throw PetstoreError.fromResponse(response, error);
      origin ??= new URL(requested || baseUrl).origin;
      fetched.add(requested);
      if (response.url) fetched.add(response.url); // where a redirect led
      const link = linkTarget(response.headers.get("Link"), "next");
      yield { items: data ?? [], hasNext: link !== undefined };
      if (link === undefined) return;
      // Resolved against the page's URL (RFC 8288 §3.2), never appended to `baseUrl`: the
      // service writes targets origin-relative (`/v1/pets?cursor=…`).
      const url = new URL(link, response.url || requested || baseUrl).href;
      // The next request carries the credentials: never to another origin.
      if (new URL(url).origin !== origin) throw new Error(`petstore: the next page link ${link} leaves ${origin}`);
      if (fetched.has(url)) throw new Error(`petstore: the next page link ${link} leads to a page already fetched`);
      next = url;
    }
  }

  /** The items of every page of `pages`. */
  async function* list<T>(page: (middleware: Middleware[]) => Promise<Result<T[]>>): ListIterator<T> {
    for await (const { items } of pages(page)) yield* items;
  }

  return {
    raw,
    accounts: {
      create: (body, o) => unwrap(raw.POST("/accounts", { body, ...init(o) })),
      me: (o) => unwrap(raw.GET("/accounts/me", { ...init(o) })),
      list: (query = {}, o) => list((middleware) => raw.GET("/accounts", { params: { query }, middleware, ...init(o) })),
      pages: (query = {}, o) => pages((middleware) => raw.GET("/accounts", { params: { query }, middleware, ...init(o) })),
      update: (accountId, body, o) => unwrap(raw.PATCH("/accounts/{accountId}", { params: { path: { accountId } }, body, ...init(o) })),
    },
    sessions: {
      create: (body, o) => unwrap(raw.POST("/sessions", { body, ...init(o) })) as Promise<Session>,
    },
    invitations: {
      create: (body, o) => unwrap(raw.POST("/invitations", { body, ...init(o) })) as Promise<Invitation>,
      accept: (body, o) => unwrap(raw.POST("/invitations/accept", { body, ...init(o) })) as Promise<Session>,
    },
    passwordResets: {
      request: (email, o) => unwrap(raw.POST("/password-resets", { body: { email }, ...init(o) })),
      confirm: (body, o) => unwrap(raw.POST("/password-resets/confirm", { body, ...init(o) })) as Promise<Session>,
    },
    apiKeys: {
      // async: an invalid Date rejects (RangeError) like any failed call, before anything is sent.
      create: async ({ expiresAt, ...key }, o) =>
        unwrap(
          raw.POST("/api-keys", {
            body: expiresAt === undefined ? key : { ...key, expiresAt: expiresAt instanceof Date ? expiresAt.toISOString() : expiresAt },
            ...init(o),
          }),
        ),
      list: (query = {}, o) => list((middleware) => raw.GET("/api-keys", { params: { query }, middleware, ...init(o) })),
      pages: (query = {}, o) => pages((middleware) => raw.GET("/api-keys", { params: { query }, middleware, ...init(o) })),
      revoke: (keyId, o) => unwrap(raw.DELETE("/api-keys/{keyId}", { params: { path: { keyId } }, ...init(o) })),
    },
    messages: {
      send: (body, o) => unwrap(raw.POST("/messages", { body, ...init(o) })),
      get: (messageId, o) => unwrap(raw.GET("/messages/{messageId}", { params: { path: { messageId } }, ...init(o) })),
    },
    pets: {
      list: (query = {}, o) => list((middleware) => raw.GET("/pets", { params: { query }, middleware, ...init(o) })),
      pages: (query = {}, o) => pages((middleware) => raw.GET("/pets", { params: { query }, middleware, ...init(o) })),
      get: (petId, o) => unwrap(raw.GET("/pets/{petId}", { params: { path: { petId } }, ...init(o) })),
      create: (body, o) => unwrap(raw.POST("/pets", { body, ...init(o) })),
      replace: (petId, body, o) => unwrap(raw.PUT("/pets/{petId}", { params: { path: { petId } }, body, ...init(o) })),
      update: (petId, body, o) => unwrap(raw.PATCH("/pets/{petId}", { params: { path: { petId } }, body, ...init(o) })),
      delete: (petId, o) => unwrap(raw.DELETE("/pets/{petId}", { params: { path: { petId } }, ...init(o) })),
      uploadPhoto: async (petId, body, contentType, o) => {
        const type = await uploadContentType(body, contentType);
        const { headers, ...rest } = init(o);
        return unwrap(
          raw.POST("/pets/{petId}/photos", {
            params: { path: { petId } },
            // The bytes as they are: the generated type says string (format: binary).
            body: body as unknown as string,
            bodySerializer: (bytes: unknown) => bytes,
            headers: { ...headers, "Content-Type": type },
            ...rest,
          }),
        );
      },
      reorderPhotos: (petId, photoIds, o) =>
        unwrap(raw.PUT("/pets/{petId}/photos", { params: { path: { petId } }, body: { photoIds }, ...init(o) })) as Promise<Pet>,
      deletePhoto: (petId, photoId, o) => unwrap(raw.DELETE("/pets/{petId}/photos/{photoId}", { params: { path: { petId, photoId } }, ...init(o) })),
      getPhoto: async (photoId, size, o) => {
        const { data, error, response } = await raw.GET("/photos/{photoId}/{size}", {
          params: { path: { photoId, size } },
          parseAs: "arrayBuffer",
          ...init(o),
        });
        if (!response.ok || data === undefined) throw PetstoreError.fromResponse(response, error);
        return {
          bytes: new Uint8Array(data),
          contentType: response.headers.get("Content-Type") ?? "",
          etag: response.headers.get("ETag") ?? undefined,
        };
      },
    },
    photoUrl: (photo, size) => photoUrl(baseUrl, photo, size),
    categories: {
      list: (query = {}, o) => list((middleware) => raw.GET("/categories", { params: { query }, middleware, ...init(o) })),
      pages: (query = {}, o) => pages((middleware) => raw.GET("/categories", { params: { query }, middleware, ...init(o) })),
      get: (categoryId, o) => unwrap(raw.GET("/categories/{categoryId}", { params: { path: { categoryId } }, ...init(o) })),
      create: (body, o) => unwrap(raw.POST("/categories", { body, ...init(o) })),
      replace: (categoryId, body, o) =>
        unwrap(raw.PUT("/categories/{categoryId}", { params: { path: { categoryId } }, body, ...init(o) })),
      delete: (categoryId, o) => unwrap(raw.DELETE("/categories/{categoryId}", { params: { path: { categoryId } }, ...init(o) })),
    },
    inventory: {
      list: (query = {}, o) => list((middleware) => raw.GET("/store/inventory", { params: { query }, middleware, ...init(o) })),
      pages: (query = {}, o) => pages((middleware) => raw.GET("/store/inventory", { params: { query }, middleware, ...init(o) })),
      get: (petId, o) => unwrap(raw.GET("/store/inventory/{petId}", { params: { path: { petId } }, ...init(o) })),
      set: (petId, body, o) => unwrap(raw.PUT("/store/inventory/{petId}", { params: { path: { petId } }, body, ...init(o) })),
    },
    orders: {
      list: (query = {}, o) => list((middleware) => raw.GET("/store/orders", { params: { query }, middleware, ...init(o) })),
      pages: (query = {}, o) => pages((middleware) => raw.GET("/store/orders", { params: { query }, middleware, ...init(o) })),
      place: (body, { idempotencyKey = crypto.randomUUID(), ...o } = {}) =>
        unwrap(raw.POST("/store/orders", { params: { header: { "Idempotency-Key": idempotencyKey } }, body, ...init(o) })),
      get: (orderId, o) => unwrap(raw.GET("/store/orders/{orderId}", { params: { path: { orderId } }, ...init(o) })),
      update: (orderId, body, o) => unwrap(raw.PATCH("/store/orders/{orderId}", { params: { path: { orderId } }, body, ...init(o) })),
      cancel: (orderId, o) => unwrap(raw.DELETE("/store/orders/{orderId}", { params: { path: { orderId } }, ...init(o) })),
    },
    sales: {
      report: (query = {}, o) => unwrap(raw.GET("/store/sales", { params: { query }, ...init(o) })),
    },
    webhooks: {
      list: (query = {}, o) => list((middleware) => raw.GET("/webhooks", { params: { query }, middleware, ...init(o) })),
      pages: (query = {}, o) => pages((middleware) => raw.GET("/webhooks", { params: { query }, middleware, ...init(o) })),
      create: (body, o) => unwrap(raw.POST("/webhooks", { body, ...init(o) })),
      get: (webhookId, o) => unwrap(raw.GET("/webhooks/{webhookId}", { params: { path: { webhookId } }, ...init(o) })),
      update: (webhookId, body, o) => unwrap(raw.PATCH("/webhooks/{webhookId}", { params: { path: { webhookId } }, body, ...init(o) })),
      delete: (webhookId, o) => unwrap(raw.DELETE("/webhooks/{webhookId}", { params: { path: { webhookId } }, ...init(o) })),
      rotateSecret: (webhookId, body, o) =>
        unwrap(raw.POST("/webhooks/{webhookId}/rotate-secret", { params: { path: { webhookId } }, body, ...init(o) })),
      sendTest: (webhookId, o) => unwrap(raw.POST("/webhooks/{webhookId}/test", { params: { path: { webhookId } }, ...init(o) })),
    },
    deliveries: {
      list: (webhookId, query = {}, o) =>
        list((middleware) => raw.GET("/webhooks/{webhookId}/deliveries", { params: { path: { webhookId }, query }, middleware, ...init(o) })),
      pages: (webhookId, query = {}, o) =>
        pages((middleware) => raw.GET("/webhooks/{webhookId}/deliveries", { params: { path: { webhookId }, query }, middleware, ...init(o) })),
      retry: (webhookId, deliveryId, o) =>
        unwrap(raw.POST("/webhooks/{webhookId}/deliveries/{deliveryId}/retry", { params: { path: { webhookId, deliveryId } }, ...init(o) })),
    },
    events: {
      list: (query = {}, o) => list((middleware) => raw.GET("/events", { params: { query }, middleware, ...init(o) })),
      pages: (query = {}, o) => pages((middleware) => raw.GET("/events", { params: { query }, middleware, ...init(o) })),
      get: (eventId, o) => unwrap(raw.GET("/events/{eventId}", { params: { path: { eventId } }, ...init(o) })),
      stream: ({ lastEventId, ...query } = {}, o = {}) =>
        streamEvents(
          (last, signal) =>
            raw.GET("/events/stream", {
              params: { query, header: last === undefined ? {} : { "Last-Event-ID": last } },
              parseAs: "stream",
              signal,
            }),
          { ...query, lastEventId },
          o,
        ),
    },
  };
}
