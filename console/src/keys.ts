import type { ApiKey, CreatedApiKey } from "@acme-pets/petstore";
import { Pages, type Console } from "./context.js";
import { confirmAction, field, formatDateTime, h, put, removeRows } from "./dom.js";

/** The API keys of the signed-in account: list, create (the secret shown once), revoke. */
export function keysView(ctx: Console): HTMLElement {
  const rows = h("tbody");
  const pages = new Pages<ApiKey>(
    ctx,
    ["key", "keys"],
    (key) => key.id,
    () => ctx.client.apiKeys.pages({ limit: 25 }),
    () => rows.replaceChildren(),
    (keys) => {
      for (const key of keys) rows.append(keyRow(ctx, key, () => pages.removed(key)));
    },
  );
  void pages.reload();

  const created = h("div", { class: "created", hidden: true, tabindex: "-1" });
  const name = h("input", { type: "text", name: "name", required: true, maxlength: 100, autocomplete: "off" });
  const submit = h("button", { type: "submit" }, "Create key");
  const form = h("form", { class: "add" }, field("Name", name, "Where the key is used, e.g. till-2"), submit);
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    void ctx.run(submit, async () => {
      const key = await ctx.client.apiKeys.create({ name: name.value });
      form.reset();
      showCreated(ctx, created, key);
      rows.prepend(keyRow(ctx, key, () => pages.removed(key)));
      pages.added(key);
    });
  });

  return h(
    "section",
    { "aria-labelledby": "keys-title" },
    h("h1", { id: "keys-title" }, "API keys"),
    h("p", { class: "lead" }, `The keys of ${ctx.account.email}. Anyone holding one acts as this account; revoke a key you no longer use.`),
    h("details", { class: "add" }, h("summary", {}, "Create a key"), form),
    created,
    h(
      "div",
      { class: "table-wrap" },
      h(
        "table",
        { class: "keys" },
        h("caption", { class: "visually-hidden" }, `API keys of ${ctx.account.email}`),
        h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "Name"), h("th", { scope: "col" }, "Starts with"), h("th", { scope: "col" }, "Created"), h("th", { scope: "col" }, h("span", { class: "visually-hidden" }, "Actions")))),
        rows,
      ),
    ),
    pages.footer,
  );
}

/** The new key's secret, shown this once, with a button that copies it. */
function showCreated(ctx: Console, box: HTMLElement, key: CreatedApiKey): void {
  const secret = h("input", { type: "text", readonly: true, value: key.key, class: "secret", "aria-label": `The new key ${key.name}`, spellcheck: "false" });
  const copy = h("button", { type: "button" }, "Copy key");
  const copied = h("span", { role: "status" });
  copy.addEventListener("click", () => {
    secret.select();
    // The clipboard API needs a secure context (https or localhost); elsewhere the key is
    // selected for the reader to copy.
    const writing = navigator.clipboard?.writeText(key.key) ?? Promise.reject(new Error("no clipboard"));
    writing.then(
      () => put(copied, "Copied."),
      () => put(copied, "Selected: copy it with Ctrl+C (⌘C)."),
    );
  });
  const hide = h("button", { type: "button", class: "secondary", onclick: () => ((box.hidden = true), box.replaceChildren()) }, "I have saved it");
  put(
    box,
    h("h2", {}, `Key ${key.name} created`),
    h("p", {}, "Copy it now: this is the only time the service shows it."),
    h("div", { class: "inline" }, secret, copy, hide),
    copied,
  );
  box.hidden = false;
  box.focus();
  ctx.done(`Created the key ${key.name}.`);
}

function keyRow(ctx: Console, key: ApiKey, removed: () => void): HTMLTableRowElement {
  const own = ctx.apiKey.startsWith(key.prefix);
  const revoke = h("button", { type: "button", class: "danger" }, "Revoke", h("span", { class: "visually-hidden" }, ` ${key.name}`));
  const row = h(
    "tr",
    { "data-key-id": key.id },
    h("td", { "data-label": "Name" }, h("span", { class: "name" }, key.name), own ? h("span", { class: "badge current" }, "This console's key") : null),
    h("td", { "data-label": "Starts with" }, h("code", {}, key.prefix)),
    h("td", { "data-label": "Created" }, formatDateTime(key.createdAt)),
    h("td", { class: "row-actions" }, revoke),
  );
  revoke.addEventListener("click", () => {
    const detail = own
      ? "This is the key this console is signed in with: the service refuses it from now on, and so the console's next call."
      : "Whatever uses it is refused from now on. This cannot be undone.";
    void confirmAction(`Revoke the key ${key.name}?`, detail, "Revoke key").then((yes) => {
      if (!yes) return;
      void ctx.run(revoke, async () => {
        await ctx.client.apiKeys.revoke(key.id);
        removeRows(row);
        removed();
        ctx.done(`The key ${key.name} was revoked.`);
        // The console's own key: its next call is refused (a 401 signs the console out
        // with the service's message); make that call now rather than at the next click.
        if (own) await ctx.client.accounts.me();
      });
    });
  });
  return row;
}
