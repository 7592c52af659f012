// The console's first screens: sign in with email and password (a session: `POST
// /sessions` mints a key for 12 hours), or paste a key; ask for a password reset; and
// the pages the one-time links open, `/console/accept?token=…` (an invitation) and
// `/console/reset?token=…` (a reset), which set a password and sign in.
//
// Where keys live. A session's key is kept as session.ts says: in memory and in this
// tab's sessionStorage only; "Sign out" revokes it and clears the storage. A pasted key is
// never stored: it lives in memory for as long as the page does. A link's token is taken
// out of the address bar the moment the script starts (history.replaceState), before
// anything else is fetched, and the page answers `Referrer-Policy: no-referrer`.

import { createPetstore, PetstoreError, type Petstore, type Session } from "@acme-pets/petstore";
import { describe } from "./context.js";
import { field, h, put } from "./dom.js";
import { loadDocument, Rules, textBounds } from "./rules.js";
import { sessionKeeper, sessionKey, type SessionKey } from "./session.js";

export type { SessionKey };

/** What the sign-in screens ask of the console once they hold a key. */
export interface SignInHooks {
  /**
   * Opens the console with `apiKey` when it is an admin's; `session` when the key is a
   * session's (it is then kept in the tab). Answers why not, or undefined.
   */
  open(apiKey: string, session?: SessionKey): Promise<string | undefined>;
  /** A client of the API; with a key, or without one for the public operations. */
  client(apiKey?: string): Petstore;
}

const consoleSession = sessionKeeper("petstore.console.session");

/** The session kept in this tab, if any. */
export function keptSession(): SessionKey | undefined {
  sessionStorage.removeItem("petstore.console.apiKey"); // pasted keys were kept by earlier builds: no more
  return consoleSession.kept();
}

/** Keeps a session's key in this tab (sessionStorage: gone when the tab closes). */
export function keepSession(session: SessionKey): void {
  consoleSession.keep(session);
}

/** Forgets the tab's session key. */
export function forgetSession(): void {
  consoleSession.forget();
}

/** A one-time link's token and what it is for. */
export interface LinkToken {
  kind: "accept" | "reset";
  token: string;
}

/**
 * The token of the one-time link the page was opened with (`/console/accept?token=…`,
 * `/console/reset?token=…`), taken out of the address bar at once: the address the tab
 * shows, keeps in its history and could send on is `/console`.
 */
export function takeLinkToken(): LinkToken | undefined {
  const kind = location.pathname.replace(/\/+$/, "").endsWith("/accept") ? "accept" : location.pathname.replace(/\/+$/, "").endsWith("/reset") ? "reset" : undefined;
  if (kind === undefined) return undefined;
  const token = new URLSearchParams(location.search).get("token") ?? "";
  history.replaceState(null, "", "/console");
  return { kind, token };
}

/** Where a message of `showSignIn` goes: under the password form, or under the key form. */
export type SignInMessage = { text: string; at: "password" | "key" };

/** The sign-in screen: email and password first; pasting a key below. */
export function showSignIn(app: HTMLElement, hooks: SignInHooks, message?: SignInMessage): void {
  onhashchange = null;
  document.title = "Sign in — Pet Store console";
  const password = passwordForm(app, hooks, message?.at === "password" ? message.text : "");
  const key = keyForm(hooks, message?.at === "key" ? message.text : "");
  put(app, h("main", { class: "sign-in-page" }, h("div", { class: "sign-in-stack" }, password.form, key.form)));
  (message?.at === "key" ? key.input : password.email).focus();
}

function passwordForm(app: HTMLElement, hooks: SignInHooks, message: string) {
  const email = h("input", { type: "email", name: "email", autocomplete: "username", required: true, spellcheck: "false" });
  const password = h("input", { type: "password", name: "password", autocomplete: "current-password", required: true });
  const error = h("p", { class: "error", role: "alert" }, message);
  const submit = h("button", { type: "submit" }, "Sign in");
  const forgot = h("button", { type: "button", class: "link", onclick: () => showForgot(app, hooks, email.value) }, "Forgot password?");
  const form = h(
    "form",
    { class: "sign-in-password card", "aria-labelledby": "sign-in-title" },
    h("h1", { id: "sign-in-title" }, "Pet Store console"),
    h("p", {}, "For shop staff: sign in with your email and password. You stay signed in in this tab only, for 12 hours at most."),
    field("Email", email),
    field("Password", password),
    error,
    h("div", { class: "actions" }, submit, forgot),
  );
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    submit.disabled = true;
    put(error, "");
    void signInWithPassword(hooks, email.value.trim(), password.value).then((problem) => {
      if (problem === undefined) return;
      submit.disabled = false;
      put(error, problem);
      password.select();
      password.focus();
    });
  });
  return { form, email };
}

/** Signs in with a session from `POST /sessions`; answers why not, or undefined. */
async function signInWithPassword(hooks: SignInHooks, email: string, password: string): Promise<string | undefined> {
  let session: Session;
  const petstore = hooks.client();
  try {
    session = await petstore.sessions.create({ email, password });
  } catch (error) {
    return describe(error);
  }
  return openSession(hooks, session);
}

/**
 * Opens the console with a session's key. A customer's session is revoked at once: the
 * console is for staff, and the key would otherwise be left live for 12 hours.
 */
async function openSession(hooks: SignInHooks, session: Session): Promise<string | undefined> {
  const kept = sessionKey(session);
  const petstore = hooks.client(kept.key);
  if (session.account.role !== "admin") {
    await petstore.apiKeys.revoke(kept.id).catch(() => {});
    return `${session.account.email} is a ${session.account.role} account. The console is for shop staff.`;
  }
  const problem = await hooks.open(kept.key, kept);
  if (problem !== undefined) await petstore.apiKeys.revoke(kept.id).catch(() => {});
  return problem;
}

function keyForm(hooks: SignInHooks, message: string) {
  const input = h("input", { type: "password", name: "apiKey", autocomplete: "off", spellcheck: "false", required: true, "aria-describedby": "sign-in-help" });
  const error = h("p", { class: "error", role: "alert", id: "sign-in-error" }, message);
  const submit = h("button", { type: "submit", class: "secondary" }, "Sign in with the key");
  const form = h(
    "form",
    { class: "sign-in card", "aria-labelledby": "key-title" },
    h("h2", { id: "key-title" }, "Or paste an API key"),
    h("p", { id: "sign-in-help" }, "An admin API key (psk_…). It is never stored: it is forgotten when you sign out, reload or close the tab."),
    field("Admin API key", input),
    error,
    submit,
  );
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const value = input.value.trim();
    if (value === "") {
      put(error, "Paste an API key first.");
      input.focus();
      return;
    }
    submit.disabled = true;
    put(error, "");
    void hooks.open(value).then((problem) => {
      if (problem === undefined) return;
      submit.disabled = false;
      put(error, problem);
      input.select();
      input.focus();
    });
  });
  return { form, input };
}

/** "Forgot password?": asks for a reset link by mail (`POST /password-resets`). */
function showForgot(app: HTMLElement, hooks: SignInHooks, email: string): void {
  document.title = "Forgot password — Pet Store console";
  const input = h("input", { type: "email", name: "email", autocomplete: "username", required: true, spellcheck: "false", value: email });
  const status = h("p", { class: "ok", role: "status" });
  const error = h("p", { class: "error", role: "alert" });
  const submit = h("button", { type: "submit" }, "Send a reset link");
  const back = h("button", { type: "button", class: "secondary", onclick: () => showSignIn(app, hooks) }, "Back to sign-in");
  const form = h(
    "form",
    { class: "sign-in-forgot card", "aria-labelledby": "forgot-title" },
    h("h1", { id: "forgot-title" }, "Forgot your password?"),
    h("p", {}, "Enter the email you sign in with. If it has a password, a link to choose a new one is mailed to it; the link works once, within an hour."),
    field("Email", input),
    status,
    error,
    h("div", { class: "actions" }, submit, back),
  );
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    submit.disabled = true;
    put(status, "");
    put(error, "");
    const petstore = hooks.client();
    void petstore.passwordResets
      .request(input.value.trim())
      .then(
        (answer) => put(status, answer.message),
        (problem: unknown) => {
          const unavailable = problem instanceof PetstoreError && problem.status === 503 && problem.code === "unavailable";
          put(error, unavailable ? `${describe(problem).replace(/\.$/, "")}. Ask an admin of the shop to help you sign in.` : describe(problem));
        },
      )
      .finally(() => {
        submit.disabled = false;
        input.focus();
      });
  });
  put(app, h("main", { class: "sign-in-page" }, h("div", { class: "sign-in-stack" }, form)));
  input.focus();
}

/**
 * The page a one-time link opens: choose a password (twice), then `POST
 * /invitations/accept` or `POST /password-resets/confirm`, which sign in. A link that
 * is not valid (any reason: one answer) says so and leads back to the sign-in.
 */
export function showLink(app: HTMLElement, hooks: SignInHooks, link: LinkToken): void {
  const invite = link.kind === "accept";
  const title = invite ? "Welcome: choose your password" : "Choose a new password";
  document.title = `${title} — Pet Store console`;
  const first = h("input", { type: "password", name: "password", autocomplete: "new-password", required: true, "aria-describedby": "password-hint" });
  const again = h("input", { type: "password", name: "passwordAgain", autocomplete: "new-password", required: true });
  const error = h("p", { class: "error", role: "alert" });
  const submit = h("button", { type: "submit" }, invite ? "Set password and sign in" : "Set the new password and sign in");
  const toSignIn = h("button", { type: "button", class: "secondary", hidden: true, onclick: () => showSignIn(app, hooks) }, "Go to sign-in");
  const hint = h("span", { class: "hint", id: "password-hint" }, "At least 12 characters; a few words you will remember make a good one.");
  void loadDocument().then(
    (doc) => {
      const bounds = textBounds(new Rules(doc).field(invite ? "InvitationAcceptance" : "PasswordResetConfirmation", "password"));
      for (const input of [first, again]) Object.entries(bounds).forEach(([name, value]) => value !== undefined && input.setAttribute(name, String(value)));
      if (bounds.minlength !== undefined) hint.textContent = `At least ${bounds.minlength} characters; a few words you will remember make a good one.`;
    },
    () => {}, // the service checks the password all the same
  );
  const form = h(
    "form",
    { class: "sign-in-token card", "aria-labelledby": "link-title" },
    h("h1", { id: "link-title" }, title),
    h("p", {}, invite ? "You were invited to the Pet Store console. Choose the password you will sign in with; this link works once." : "Choose the password you will sign in with from now on. Your other console sessions are signed out."),
    h("label", { class: "field" }, h("span", { class: "label" }, "New password"), first, hint),
    field("The same password again", again),
    error,
    h("div", { class: "actions" }, submit, toSignIn),
  );
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    put(error, "");
    if (first.value !== again.value) {
      put(error, "The two passwords differ: type the same password twice.");
      again.select();
      again.focus();
      return;
    }
    submit.disabled = true;
    const body = { token: link.token, password: first.value };
    const petstore = hooks.client();
    const call = invite ? petstore.invitations.accept(body) : petstore.passwordResets.confirm(body);
    void call
      .then((session) => openSession(hooks, session), (problem: unknown) => linkProblem(problem, submit, toSignIn))
      .then((problem) => {
        if (problem === undefined) return;
        submit.disabled = false;
        put(error, problem);
        (toSignIn.hidden ? first : toSignIn).focus();
      });
  });
  put(app, h("main", { class: "sign-in-page" }, h("div", { class: "sign-in-stack" }, form)));
  first.focus();
}

/** What a refused link says; a link that is not valid offers the sign-in instead. */
function linkProblem(problem: unknown, submit: HTMLButtonElement, toSignIn: HTMLButtonElement): string {
  if (problem instanceof PetstoreError && problem.code === "invalid_token") {
    submit.hidden = true;
    toSignIn.hidden = false;
  }
  return describe(problem);
}
