// The staff console: sign in with email and password (a session key for 12 hours) or an
// admin key, then run the shop over the public API.
//
// The key goes to the service as `Authorization: Bearer` on each call, never in a URL, a
// cookie or a log. A session's key is kept in the tab's sessionStorage (signin.ts says
// why and how); a pasted key in memory only. The
// page keeps no other state on the server: every action is a documented /v1 call. The
// store's rules the screens offer (the changes of status, the fields' limits) and the
// scopes a new key may have are read from the document the service serves, at sign-in.
//
// A key may be limited to some scopes. `GET /accounts/me` tells the key's scopes at
// sign-in; with the document's `x-scopes` of each operation they decide what is offered
// (ctx.may): a screen whose list the key may not read is not in the menu, and a button
// or a form whose call it may not make is not shown. A call the service refuses for a
// scope all the same (the key changed meanwhile) says which scope the key lacks.

import { createPetstore, PetstoreError, type Category, type CurrentAccount, type Petstore } from "@acme-pets/petstore";
import { categoriesView } from "./categories.js";
import { eventsView } from "./events.js";
import { describe, type Console } from "./context.js";
import { customersView } from "./customers.js";
import { h, keepFocus, put } from "./dom.js";
import { keysView } from "./keys.js";
import { AccountNames } from "./lookup.js";
import { ordersView } from "./orders.js";
import { salesView } from "./sales.js";
import { staffView } from "./staff.js";
import { loadDocument, Rules } from "./rules.js";
import { lackedScope, permissions, scopeCatalogue, type ScopeCatalogue } from "./scopes.js";
import { forgetSession, keepSession, keptSession, showLink, showSignIn, takeLinkToken, type SessionKey, type SignInHooks, type SignInMessage } from "./signin.js";
import { stockView } from "./stock.js";
import { webhooksView } from "./webhooks.js";

// Each screen with the operation it reads: offered only to a key that may call it.
const views = [
  { id: "stock", title: "Stock", reads: "listPets", render: stockView },
  { id: "orders", title: "Orders", reads: "listOrders", render: ordersView },
  { id: "sales", title: "Sales", reads: "getSalesReport", render: salesView },
  { id: "categories", title: "Categories", reads: "listCategories", render: categoriesView },
  { id: "customers", title: "Customers", reads: "listAccounts", render: customersView },
  { id: "staff", title: "Staff", reads: "listAccounts", render: staffView },
  { id: "keys", title: "API keys", reads: "listApiKeys", render: keysView },
  { id: "webhooks", title: "Webhooks", reads: "listWebhooks", render: webhooksView },
  { id: "events", title: "Event feed", reads: "listEvents", render: eventsView },
] as const;

const root = document.getElementById("console");
if (root === null) throw new Error("console: the page has no #console element");
const app: HTMLElement = root;

function client(apiKey?: string): Petstore {
  return createPetstore({
    baseUrl: new URL("/v1", location.origin).href,
    ...(apiKey === undefined ? {} : { apiKey }),
    // A person is waiting: one quick retry, and no waiting a minute on a Retry-After.
    retries: 1,
    maxRetryDelayMs: 5_000,
  });
}

/**
 * Checks a key with `GET /accounts/me` and opens the console when it is an admin's. A
 * customer key is refused here, before anything is kept. The service's document is read
 * meanwhile: the screens offer its rules. A session's key is kept in the tab.
 */
async function signIn(apiKey: string, session?: SessionKey): Promise<string | undefined> {
  let account: CurrentAccount;
  const petstore = client(apiKey);
  const document = loadDocument();
  document.catch(() => {}); // a refused key is what the page says then
  try {
    account = await petstore.accounts.me();
  } catch (error) {
    const lacked = lackedScope(error);
    if (lacked !== undefined) {
      return `This key lacks the scope ${lacked || "account:read"}: the console reads the key's account to sign in. Use a key that has it.`;
    }
    return describe(error);
  }
  if (account.role !== "admin") {
    return `This key belongs to ${account.email}, a ${account.role} account. The console is for shop staff: sign in with an admin key.`;
  }
  let doc: unknown;
  let rules: Rules;
  try {
    doc = await document;
    rules = new Rules(doc);
  } catch (error) {
    return describe(error);
  }
  if (session !== undefined) keepSession(session);
  current = { petstore, session };
  openConsole(petstore, account, apiKey, rules, doc);
  return undefined;
}

/** Counts sign-ins and sign-outs: work of an earlier session (a call still under way) says nothing. */
let session = 0;
/** The console's client now, and its session's key when it signed in with a password. */
let current: { petstore: Petstore; session: SessionKey | undefined } | undefined;

const hooks: SignInHooks = { open: signIn, client };

/**
 * Back to the sign-in: forgets the key. `revoke` (the Sign out button) revokes a session's
 * key first (`DELETE /api-keys/{keyId}` with the key itself), so that it opens nothing
 * even if it was copied; a key the service refused is only forgotten.
 */
/** Ends the live streams of the screen shown: aborted when another screen opens, and on sign-out. */
let screenStreams = new AbortController();

async function signOut(message: string, revoke = false): Promise<void> {
  session++;
  screenStreams.abort();
  const was = current;
  current = undefined;
  forgetSession();
  let text = message;
  if (revoke && was?.session !== undefined) {
    put(app, h("main", { class: "sign-in-page" }, h("p", { role: "status" }, "Signing out…")));
    try {
      await was.petstore.apiKeys.revoke(was.session.id);
      text = "Signed out: the session's key is revoked.";
    } catch (error) {
      text = `Signed out in this tab, but the service could not revoke the session's key (${describe(error)}): it works until it expires${was.session.expiresAt ? ` (${new Date(was.session.expiresAt).toLocaleString()})` : ""}.`;
    }
  }
  const at: SignInMessage["at"] = was === undefined || was.session !== undefined ? "password" : "key";
  showSignIn(app, hooks, { text, at });
}

function openConsole(petstore: Petstore, account: CurrentAccount, apiKey: string, rules: Rules, doc: unknown): void {
  const status = h("p", { class: "notice", role: "status" });
  const alert = h("p", { class: "notice error", role: "alert" });
  const clearNotices = () => {
    put(status, "");
    put(alert, "");
  };
  let categories: Promise<Map<number, Category>> | undefined;

  const mine = ++session;
  const may = permissions(doc, account.key?.scopes);
  const offered = views.filter((v) => may(v.reads));
  const ctx: Console = {
    client: petstore,
    account,
    apiKey,
    rules,
    done(message) {
      if (mine !== session) return;
      put(alert, "");
      put(status, message);
    },
    fail(error) {
      if (mine !== session) return;
      if (error instanceof PetstoreError && error.status === 401) {
        void signOut(`Signed out: the service refused the key. ${describe(error)}`);
        return;
      }
      put(status, "");
      put(alert, describe(error, lackedScope(error)));
    },
    async run(button, action) {
      const restoreFocus = keepFocus();
      if (button) button.disabled = true;
      clearNotices();
      try {
        await action();
      } catch (error) {
        ctx.fail(error);
      } finally {
        if (button) button.disabled = false;
        restoreFocus();
      }
    },
    categories() {
      categories ??= (async () => {
        const all = new Map<number, Category>();
        const limit = rules.parameter("listCategories", "limit").maximum;
        for await (const category of petstore.categories.list({ limit })) all.set(category.id, category);
        return all;
      })();
      categories.catch(() => (categories = undefined));
      return categories;
    },
    categoriesChanged() {
      categories = undefined;
    },
    accounts: new AccountNames(petstore, account, lackedScope, rules.parameter("listAccounts", "ids").maxItems),
    scopes(): Promise<ScopeCatalogue> {
      return new Promise((resolve) => resolve(scopeCatalogue(doc)));
    },
    may,
    lacks: lackedScope,
    live(onEvent, onOpen, query = {}) {
      if (!may("streamEvents")) return;
      const { signal } = screenStreams;
      void (async () => {
        try {
          for await (const event of petstore.events.stream(query, { signal, onOpen })) {
            if (mine !== session || signal.aborted) return;
            onEvent(event);
          }
        } catch (error) {
          if (!signal.aborted && mine === session) ctx.fail(error);
        }
      })();
    },
  };

  const nav = h("nav", { "aria-label": "Sections" });
  const main = h("main", { id: "main", tabindex: "-1" });
  const header = h(
    "header",
    { class: "top" },
    h("p", { class: "brand" }, "Pet Store console"),
    h(
      "div",
      { class: "who" },
      h("span", {}, account.email, " ", h("span", { class: "role" }, account.role)),
      h("button", { type: "button", class: "secondary", onclick: () => void signOut("Signed out. The key is forgotten.", true) }, "Sign out"),
    ),
    nav,
  );

  function show(id: string): void {
    const view = offered.find((v) => v.id === id) ?? offered[0];
    // The screen shown already (its link, when the address had no hash yet): drawing it
    // again would reload its lists under the reader, a flicker and lost state for nothing.
    if (view !== undefined && main.dataset.screen === view.id) return;
    if (view === undefined) {
      document.title = "Pet Store console";
      put(main, h("p", { class: "lead" }, "This key may use none of the console's screens: its scopes allow none of the lists they show. Sign in with a key that has more scopes."));
      return;
    }
    for (const link of nav.querySelectorAll("a")) {
      if (link.hash === `#${view.id}`) link.setAttribute("aria-current", "page");
      else link.removeAttribute("aria-current");
    }
    document.title = `${view.title} — Pet Store console`;
    clearNotices();
    screenStreams.abort();
    screenStreams = new AbortController();
    put(main, view.render(ctx));
    // Which screen main holds: set once it is drawn, so that what waits for a screen
    // does not act on the controls of the one it replaces.
    main.dataset.screen = view.id;
  }

  put(nav, ...offered.map((v) => h("a", { href: `#${v.id}` }, v.title)));
  // The skip link moves focus without touching the hash, which names the section.
  const skip = h("a", { class: "skip", href: "#main", onclick: (event: Event) => (event.preventDefault(), main.focus()) }, "Skip to content");
  put(app, skip, header, h("div", { class: "notices" }, status, alert), main);
  // The event's own address, not location's: two quick clicks queue two events that
  // would both read the second hash, and the screen to leave would never be left.
  onhashchange = (event: HashChangeEvent) => {
    show(new URL(event.newURL).hash.slice(1));
    main.focus();
  };
  show(location.hash.slice(1));
}

// A one-time link (its token out of the address bar first), or this tab's session,
// checked again (it may have been revoked or have expired), or the sign-in.
const link = takeLinkToken();
const kept = keptSession();
if (link !== undefined) {
  showLink(app, hooks, link);
} else if (kept === undefined) {
  showSignIn(app, hooks);
} else {
  void signIn(kept.key, kept).then((problem) => {
    if (problem !== undefined) void signOut(problem);
  });
}
