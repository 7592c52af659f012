// The shop at /shop: customers browse the pets for sale, order, and see and cancel their
// own orders, over the public API with the TypeScript SDK (bundled by console/build.mjs,
// with the console's helpers it imports: dom.ts, money.ts, session.ts…).
//
// The key is a session's (`POST /sessions`, limited to the shop's scopes), sent as
// `Authorization: Bearer` on each call, never in a URL or a cookie; it is kept in this
// tab's sessionStorage as the console keeps its own, and revoked on sign-out. The page
// keeps no other state on the server. Screens are addressed by the hash: #pets, #orders.

import { createPetstore, PetstoreError, type CurrentAccount, type Petstore, type Session } from "@acme-pets/petstore";
import { describe } from "../../console/src/context.js";
import { h, put } from "../../console/src/dom.js";
import { sessionKeeper, sessionKey, type SessionKey } from "../../console/src/session.js";
import { showWelcome, type AccountHooks } from "./account.js";
import { catalogueView } from "./catalogue.js";
import type { Shop } from "./context.js";
import { ordersView } from "./orders.js";

const screens = [
  { id: "pets", title: "Pets", render: catalogueView },
  { id: "orders", title: "My orders", render: ordersView },
] as const;

const root = document.getElementById("shop");
if (root === null) throw new Error("shop: the page has no #shop element");
const app: HTMLElement = root;
const keeper = sessionKeeper("petstore.shop.session");

function client(apiKey?: string): Petstore {
  return createPetstore({
    baseUrl: new URL("/v1", location.origin).href,
    ...(apiKey === undefined ? {} : { apiKey }),
    // A person is waiting: one quick retry, and no waiting a minute on a Retry-After.
    retries: 1,
    maxRetryDelayMs: 5_000,
  });
}

const hooks: AccountHooks = { client: () => client(), open: (session: Session) => open(sessionKey(session)) };

/** Counts sign-ins and sign-outs: work of an earlier session says nothing. */
let generation = 0;
/** The signed-in session: its client and key. */
let current: { petstore: Petstore; session: SessionKey } | undefined;

/** Opens the shop with a session's key once `GET /accounts/me` takes it; answers why not. */
async function open(session: SessionKey): Promise<string | undefined> {
  const petstore = client(session.key);
  let account: CurrentAccount;
  try {
    account = await petstore.accounts.me();
  } catch (error) {
    return describe(error);
  }
  keeper.keep(session);
  current = { petstore, session };
  showShop(petstore, account);
  return undefined;
}

/** Back to the welcome screen: the session's key revoked first when `revoke`, then forgotten. */
async function signOut(message: string, revoke = false): Promise<void> {
  generation++;
  const was = current;
  current = undefined;
  keeper.forget();
  onhashchange = null;
  let text = message;
  if (revoke && was !== undefined) {
    put(app, h("main", { class: "welcome" }, h("p", { role: "status" }, "Signing out…")));
    try {
      await was.petstore.apiKeys.revoke(was.session.id);
    } catch (error) {
      text = `Signed out in this tab, but the service could not end the session (${describe(error)}): it ends by itself within 12 hours.`;
    }
  }
  showWelcome(app, hooks, text);
}

function showShop(petstore: Petstore, account: CurrentAccount): void {
  const mine = ++generation;
  const status = h("p", { class: "notice", role: "status" });
  const alert = h("p", { class: "notice error", role: "alert" });
  const main = h("main", { id: "main", tabindex: "-1" });
  const shop: Shop = {
    client: petstore,
    account,
    done(message, ...extra) {
      if (mine !== generation) return;
      put(alert, "");
      put(status, message, ...extra);
    },
    fail(error) {
      if (mine !== generation) return;
      if (error instanceof PetstoreError && error.status === 401) {
        void signOut(`Your session has ended: sign in again. (${describe(error)})`);
        return;
      }
      put(status, "");
      put(alert, describe(error));
    },
    clear() {
      put(status, "");
      put(alert, "");
    },
  };
  const nav = h("nav", { "aria-label": "Shop" }, ...screens.map((s) => h("a", { href: `#${s.id}` }, s.title)));
  const signOutButton = h("button", { type: "button", class: "secondary", onclick: () => void signOut("Signed out.", true) }, "Sign out");
  const header = h("header", { class: "top" }, h("p", { class: "brand" }, "Pet Store"), nav, h("div", { class: "who" }, h("span", { class: "email" }, account.email), signOutButton));
  const skip = h("a", { class: "skip", href: "#main", onclick: (event: Event) => (event.preventDefault(), main.focus()) }, "Skip to content");
  put(app, skip, header, h("div", { class: "notices" }, status, alert), main);

  const show = (id: string) => {
    const screen = screens.find((s) => s.id === id) ?? screens[0];
    for (const link of nav.querySelectorAll("a")) {
      if (link.hash === `#${screen.id}`) link.setAttribute("aria-current", "page");
      else link.removeAttribute("aria-current");
    }
    document.title = `${screen.title} — Pet Store`;
    shop.clear();
    put(main, screen.render(shop));
    main.dataset.screen = screen.id;
  };
  // The event's own address, not location's: two quick clicks queue two events.
  onhashchange = (event: HashChangeEvent) => {
    show(new URL(event.newURL).hash.slice(1));
    main.focus();
  };
  show(location.hash.slice(1));
  // Where a screen reader and the keyboard go on from: the sign-in form is gone.
  main.focus();
}

// This tab's session, checked again (it may have been revoked or have expired), or the welcome.
const kept = keeper.kept();
if (kept === undefined) {
  showWelcome(app, hooks);
} else {
  void open(kept).then((problem) => {
    if (problem === undefined) return;
    keeper.forget();
    showWelcome(app, hooks, `Sign in again: ${problem}`);
  });
}
