// The shop's first screen: sign in with email and password, or create an account (`POST
// /accounts`, then `POST /sessions`). Browsing needs a key (the pets are read with
// `pets:read`), so it comes first. The session's key is limited to the shop's scopes
// and kept as the console keeps its own (console/src/session.ts), under the shop's name.

import type { Petstore, Session } from "@acme-pets/petstore";
import { describe } from "../../console/src/context.js";
import { field, h, put } from "../../console/src/dom.js";
import { loadDocument, Rules, textBounds } from "../../console/src/rules.js";
import { sessionScopes } from "./context.js";

/** What the forms ask of the page: a client without a key, and to open the shop with a session. */
export interface AccountHooks {
  client(): Petstore;
  open(session: Session): Promise<string | undefined>;
}

/** The welcome screen: what the shop is, and the two forms side by side (stacked on a phone). */
export function showWelcome(app: HTMLElement, hooks: AccountHooks, message = ""): void {
  document.title = "Sign in — Pet Store";
  const signIn = signInForm(hooks, message);
  const signUp = signUpForm(hooks);
  const main = h(
    "main",
    { id: "main", class: "welcome", tabindex: "-1" },
    h("h1", {}, "Pets looking for a home"),
    h("p", { class: "lead" }, "Sign in, or create an account, to see the pets for sale, order one and follow your orders."),
    h("div", { class: "account-forms" }, signIn.form, signUp),
  );
  put(app, h("header", { class: "top" }, h("p", { class: "brand" }, "Pet Store")), main);
  signIn.email.focus();
}

function emailInput(autocomplete: string): HTMLInputElement {
  return h("input", { type: "email", name: "email", autocomplete, required: true, spellcheck: "false" });
}

function signInForm(hooks: AccountHooks, message: string) {
  const email = emailInput("username");
  const password = h("input", { type: "password", name: "password", autocomplete: "current-password", required: true });
  const error = h("p", { class: "error", role: "alert" }, message);
  const submit = h("button", { type: "submit" }, "Sign in");
  const form = h(
    "form",
    { class: "card sign-in", "aria-labelledby": "sign-in-title" },
    h("h2", { id: "sign-in-title" }, "Sign in"),
    field("Email", email),
    field("Password", password),
    error,
    submit,
  );
  onSubmit(form, submit, error, password, () => startSession(hooks, email.value.trim(), password.value));
  return { form, email };
}

function signUpForm(hooks: AccountHooks): HTMLFormElement {
  const email = emailInput("email");
  const password = h("input", { type: "password", name: "new-password", autocomplete: "new-password", required: true, minlength: 12, "aria-describedby": "sign-up-hint" });
  const hint = h("span", { class: "hint", id: "sign-up-hint" }, "At least 12 characters; a few words you will remember make a good one.");
  const error = h("p", { class: "error", role: "alert" });
  const submit = h("button", { type: "submit" }, "Create the account");
  // The password's bounds are the document's, as the console reads them.
  void loadDocument().then(
    (doc) => {
      const bounds = textBounds(new Rules(doc).field("NewAccount", "password"));
      Object.entries(bounds).forEach(([name, value]) => value !== undefined && password.setAttribute(name, String(value)));
      if (bounds.minlength !== undefined) hint.textContent = `At least ${bounds.minlength} characters; a few words you will remember make a good one.`;
    },
    () => {}, // the service checks the password all the same
  );
  const form = h(
    "form",
    { class: "card sign-up", "aria-labelledby": "sign-up-title" },
    h("h2", { id: "sign-up-title" }, "New here? Create an account"),
    field("Email", email),
    h("label", { class: "field" }, h("span", { class: "label" }, "Password"), password, hint),
    error,
    submit,
  );
  onSubmit(form, submit, error, password, async () => {
    try {
      await hooks.client().accounts.create({ email: email.value.trim(), password: password.value });
    } catch (problem) {
      return describe(problem);
    }
    return startSession(hooks, email.value.trim(), password.value);
  });
  return form;
}

/** Runs a form's action on submit: the button off meanwhile, a problem shown and the password selected. */
function onSubmit(form: HTMLFormElement, submit: HTMLButtonElement, error: HTMLElement, password: HTMLInputElement, action: () => Promise<string | undefined>): void {
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    submit.disabled = true;
    put(error, "");
    void action().then((problem) => {
      if (problem === undefined) return;
      submit.disabled = false;
      put(error, problem);
      password.select();
      password.focus();
    });
  });
}

/** `POST /sessions` with the shop's scopes, then opens the shop; answers why not, or undefined. */
async function startSession(hooks: AccountHooks, email: string, password: string): Promise<string | undefined> {
  let session: Session;
  try {
    session = await hooks.client().sessions.create({ email, password, scopes: [...sessionScopes] });
  } catch (problem) {
    return describe(problem);
  }
  return hooks.open(session);
}
