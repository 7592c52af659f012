import type { ApiKey, CreatedApiKey, NewApiKey } from "@acme-pets/petstore";
import { Pages, type Console } from "./context.js";
import { confirmAction, field, formatDateTime, h, put, removeRows } from "./dom.js";
import { textBounds } from "./rules.js";
import type { ScopeCatalogue } from "./scopes.js";

const day = 24 * 60 * 60 * 1000;
/** A key that expires within this long is flagged. */
const expiringWithin = 7 * day;

/** The lifetimes offered; "never" sends no `expiresAt`, "date" an end of day chosen. */
const lifetimes = [
  { value: "1", label: "1 day", days: 1 },
  { value: "7", label: "7 days", days: 7 },
  { value: "30", label: "30 days", days: 30 },
  { value: "90", label: "90 days", days: 90 },
  { value: "never", label: "No expiry" },
  { value: "date", label: "Until a date…" },
] as const;
const defaultLifetime = "30";

/**
 * The API keys of the signed-in account: list them with their scopes, expiry and last
 * use (flagging those that expire within a week, and expired ones); create one with
 * chosen scopes and a lifetime (the secret shown once); revoke.
 */
export function keysView(ctx: Console): HTMLElement {
  const rows = h("tbody");
  const shown = new Map<number, ApiKey>();
  const summary = h("p", { class: "expiry-summary", role: "status" });
  const showSummary = () => put(summary, expirySummary([...shown.values()], Date.now()));
  const form = new KeyForm(ctx);

  const add = (key: ApiKey, at: "start" | "end") => {
    shown.set(key.id, key);
    const row = keyRow(ctx, key, () => {
      shown.delete(key.id);
      pages.removed(key);
      showSummary();
    });
    if (at === "start") rows.prepend(row);
    else rows.append(row);
    // The key this console signs in with bounds what a key made here may have.
    if (ctx.apiKey.startsWith(key.prefix)) form.signedInWith(key);
  };
  // An account holds at most 25 live keys: one page of the most a page may hold has them
  // all, the console's own too.
  const pages = new Pages<ApiKey>(
    ctx,
    ["key", "keys"],
    (key) => key.id,
    () => ctx.client.apiKeys.pages({ limit: ctx.rules.parameter("listApiKeys", "limit").maximum }),
    () => {
      rows.replaceChildren();
      shown.clear();
      showSummary();
    },
    (keys) => {
      for (const key of keys) add(key, "end");
      showSummary();
    },
  );
  void pages.reload();

  form.onCreated = (key) => {
    add(key, "start");
    pages.added(key);
    showSummary();
  };

  return h(
    "section",
    { "aria-labelledby": "keys-title" },
    h("h1", { id: "keys-title" }, "API keys"),
    h(
      "p",
      { class: "lead" },
      `The keys of ${ctx.account.email}. Anyone holding one acts as this account, within the key's scopes and until it expires; give each use a key of its own with only the scopes it needs, and revoke a key you no longer use.`,
    ),
    ctx.may("createApiKey") && h("details", { class: "add" }, h("summary", {}, "Create a key"), form.element),
    form.created,
    summary,
    h(
      "div",
      { class: "table-wrap" },
      h(
        "table",
        { class: "keys" },
        h("caption", { class: "visually-hidden" }, `API keys of ${ctx.account.email}`),
        h(
          "thead",
          {},
          h(
            "tr",
            {},
            ...["Name", "Starts with", "Scopes", "Created", "Expires", "Last used"].map((title) => h("th", { scope: "col" }, title)),
            h("th", { scope: "col" }, h("span", { class: "visually-hidden" }, "Actions")),
          ),
        ),
        rows,
      ),
    ),
    pages.footer,
  );
}

/** The form that makes a key: name, lifetime, scopes. */
class KeyForm {
  readonly element: HTMLFormElement;
  /** Where the new key's secret is shown, once. */
  readonly created = h("div", { class: "created", hidden: true, tabindex: "-1" });
  onCreated: (key: CreatedApiKey) => void = () => {};

  private readonly name: HTMLInputElement;
  private readonly lifetime = h("select", { name: "lifetime" }, ...lifetimes.map((l) => h("option", { value: l.value, selected: l.value === defaultLifetime }, l.label)));
  private readonly until = h("input", { type: "date", name: "expiresOn" });
  private readonly untilField = field("Expires at the end of", this.until, "Your time");
  private readonly everyScope = h("input", { type: "radio", name: "scopeChoice", value: "all" });
  private readonly someScopes = h("input", { type: "radio", name: "scopeChoice", value: "some", checked: true });
  private readonly scopeList = h("div", { class: "scope-list" }, h("p", { class: "hint" }, "Loading the scopes…"));
  private boxes: HTMLInputElement[] = [];
  /** The scopes of the key the console signs in with: undefined while unknown or when it has every scope of its role. */
  private ownScopes: string[] | undefined;
  private readonly submit = h("button", { type: "submit" }, "Create key");

  constructor(private readonly ctx: Console) {
    this.name = h("input", { type: "text", name: "name", required: true, ...textBounds(ctx.rules.field("NewApiKey", "name")), autocomplete: "off" });
    this.untilField.hidden = true;
    this.lifetime.addEventListener("change", () => {
      this.untilField.hidden = this.lifetime.value !== "date";
      this.until.required = !this.untilField.hidden;
      if (!this.untilField.hidden) this.until.min = dateInput(new Date(Date.now() + day));
    });
    for (const radio of [this.everyScope, this.someScopes]) radio.addEventListener("change", () => this.enableBoxes());
    const role = ctx.account.role;
    this.element = h(
      "form",
      { class: "add key-form" },
      field("Name", this.name, "Where the key is used, e.g. till-2"),
      h("div", { class: "inline lifetime" }, field("Lifetime", this.lifetime), this.untilField),
      h(
        "fieldset",
        { class: "scopes" },
        h("legend", {}, "Scopes"),
        h(
          "label",
          { class: "choice" },
          this.everyScope,
          ` Every scope of the ${role} role`,
          h("span", { class: "hint" }, " (now and as scopes are added; made by a key with fewer, it gets that key's)"),
        ),
        h("label", { class: "choice" }, this.someScopes, " Only these:"),
        this.scopeList,
      ),
      this.submit,
    );
    this.element.addEventListener("submit", (event) => {
      event.preventDefault();
      this.create();
    });
    void ctx.scopes().then(
      (catalogue) => this.showScopes(catalogue),
      (error: unknown) => {
        // Without the document's list, a key can still be made with every scope of the role.
        put(this.scopeList, h("p", { class: "hint" }, `The scopes could not be loaded: ${error instanceof Error ? error.message : String(error)}`));
        this.everyScope.checked = true;
        this.someScopes.disabled = true;
      },
    );
  }

  /** The key the console signs in with: a key made here may have no scope it lacks. */
  signedInWith(key: ApiKey): void {
    this.ownScopes = key.scopes;
    this.enableBoxes();
  }

  private showScopes(catalogue: ScopeCatalogue): void {
    const allowed = catalogue.allowed(this.ctx.account.role);
    const offered = catalogue.scopes.filter((s) => allowed.has(s.name));
    this.boxes = offered.map((s) => h("input", { type: "checkbox", name: "scopes", value: s.name }));
    put(
      this.scopeList,
      h(
        "ul",
        {},
        ...offered.map((s, i) =>
          h(
            "li",
            {},
            h("label", {}, this.boxes[i], " ", h("code", {}, s.name), " ", h("span", { class: "hint" }, plain(s.description)), h("span", { class: "lacking hint", hidden: true }, " (this console's key lacks it)")),
          ),
        ),
      ),
    );
    this.enableBoxes();
  }

  /** A scope box is usable when only some scopes are chosen and the console's key has the scope. */
  private enableBoxes(): void {
    for (const box of this.boxes) {
      const lacking = this.ownScopes !== undefined && !this.ownScopes.includes(box.value);
      box.disabled = this.everyScope.checked || lacking;
      if (lacking) box.checked = false;
      const note = box.parentElement?.querySelector<HTMLElement>(".lacking");
      if (note) note.hidden = !lacking;
    }
  }

  private create(): void {
    const request: NewApiKey = { name: this.name.value };
    if (this.someScopes.checked) {
      const scopes = this.boxes.filter((b) => b.checked).map((b) => b.value);
      if (scopes.length === 0) {
        this.ctx.fail(new Error("Choose the scopes the key needs, or every scope of the role."));
        this.boxes.find((b) => !b.disabled)?.focus();
        return;
      }
      request.scopes = scopes as NewApiKey["scopes"];
    }
    const expiresAt = this.expiresAt();
    if (expiresAt === null) {
      this.ctx.fail(new Error("Choose a day after today for the key to expire."));
      this.until.focus();
      return;
    }
    if (expiresAt !== undefined) request.expiresAt = expiresAt;
    void this.ctx.run(this.submit, async () => {
      const key = await this.ctx.client.apiKeys.create(request);
      this.element.reset();
      this.untilField.hidden = true;
      this.enableBoxes();
      this.onCreated(key);
      showCreated(this.ctx, this.created, key);
    });
  }

  /** The chosen expiry (RFC 3339); undefined for none; null when the date chosen is not in the future. */
  private expiresAt(): string | undefined | null {
    const choice = lifetimes.find((l) => l.value === this.lifetime.value) ?? lifetimes[2];
    if ("days" in choice) return new Date(Date.now() + choice.days * day).toISOString();
    if (choice.value === "never") return undefined;
    // The end of the chosen day, in the reader's time zone (the control has none).
    const [y, m, d] = this.until.value.split("-").map(Number);
    if (y === undefined || m === undefined || d === undefined || !this.until.value) return null;
    const end = new Date(y, m - 1, d + 1);
    return Number.isNaN(end.getTime()) || end.getTime() <= Date.now() ? null : end.toISOString();
  }
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
    h("p", { class: "hint" }, "Scopes: ", scopesText(key.scopes), ". Expires: ", key.expiresAt ? formatDateTime(key.expiresAt) : "never", "."),
  );
  box.hidden = false;
  box.focus();
  ctx.done(`Created the key ${key.name}.`);
}

function keyRow(ctx: Console, key: ApiKey, removed: () => void): HTMLTableRowElement {
  const own = ctx.apiKey.startsWith(key.prefix);
  const revoke = h("button", { type: "button", class: "danger" }, "Revoke", h("span", { class: "visually-hidden" }, ` ${key.name}`));
  const state = expiryState(key, Date.now());
  const row = h(
    "tr",
    { "data-key-id": key.id, class: state },
    h("td", { "data-label": "Name" }, h("span", { class: "name" }, key.name), own ? h("span", { class: "badge current" }, "This console's key") : null),
    h("td", { "data-label": "Starts with" }, h("code", {}, key.prefix)),
    h(
      "td",
      { "data-label": "Scopes", class: "key-scopes" },
      key.scopes === undefined ? h("span", { class: "all-scopes" }, "All of the role's") : key.scopes.length === 0 ? "None" : h("ul", { class: "scopes" }, ...key.scopes.map((s) => h("li", {}, h("code", {}, s)))),
    ),
    h("td", { "data-label": "Created" }, formatDateTime(key.createdAt)),
    h("td", { "data-label": "Expires", class: "expires" }, ...expiryCell(key, state)),
    h("td", { "data-label": "Last used", class: "last-used" }, key.lastUsedAt ? formatDateTime(key.lastUsedAt) : "Never"),
    h("td", { class: "row-actions" }, ctx.may("revokeApiKey") && revoke),
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

type ExpiryState = "expired" | "expiring" | undefined;

/** Whether a key has expired, or expires within a week, at `now`. */
export function expiryState(key: ApiKey, now: number): ExpiryState {
  if (!key.expiresAt) return undefined;
  const at = new Date(key.expiresAt).getTime();
  if (Number.isNaN(at)) return undefined;
  if (at <= now) return "expired";
  return at - now <= expiringWithin ? "expiring" : undefined;
}

function expiryCell(key: ApiKey, state: ExpiryState): (Node | string)[] {
  if (!key.expiresAt) return ["Never"];
  const date = formatDateTime(key.expiresAt);
  switch (state) {
    case "expired":
      return [h("span", { class: "badge expired" }, "Expired"), " ", date];
    case "expiring":
      // A marker that is not colour alone: the sign and the words.
      return [h("span", { class: "badge expiring" }, h("span", { "aria-hidden": "true" }, "⚠ "), `Expires ${inWords(new Date(key.expiresAt).getTime() - Date.now())}`), " ", date];
    default:
      return [date];
  }
}

/** "in 3 days", "in 5 hours", "in 20 minutes": how soon, in the reader's language, rounded. */
function inWords(ms: number): string {
  const words = new Intl.RelativeTimeFormat(undefined, { numeric: "always" });
  const hour = 60 * 60 * 1000;
  if (ms >= day - hour / 2) return words.format(Math.round(ms / day), "day");
  if (ms >= hour - 30_000) return words.format(Math.round(ms / hour), "hour");
  return words.format(Math.max(1, Math.round(ms / 60_000)), "minute");
}

/** The line above the list naming the keys that expire within a week, and the expired ones. */
function expirySummary(keys: ApiKey[], now: number): string {
  const names = (state: ExpiryState) => keys.filter((k) => expiryState(k, now) === state).map((k) => k.name);
  const soon = names("expiring");
  const gone = names("expired");
  const parts: string[] = [];
  if (soon.length > 0) parts.push(`${soon.length === 1 ? "1 key expires" : `${soon.length} keys expire`} within 7 days: ${soon.join(", ")}.`);
  if (gone.length > 0) parts.push(`${gone.length === 1 ? "1 key has" : `${gone.length} keys have`} expired: ${gone.join(", ")}. The service refuses ${gone.length === 1 ? "it" : "them"}; revoke ${gone.length === 1 ? "it" : "them"} to tidy up.`);
  return parts.join(" ");
}

function scopesText(scopes: string[] | undefined): string {
  return scopes === undefined ? "all of the role's" : scopes.length === 0 ? "none" : scopes.join(", ");
}

/** A description of the document without its Markdown code marks. */
function plain(markdown: string): string {
  return markdown.replace(/`/g, "");
}

/** The value of an `<input type="date">` for a day, in the reader's time zone. */
function dateInput(date: Date): string {
  const local = new Date(date.getTime() - date.getTimezoneOffset() * 60_000);
  return local.toISOString().slice(0, 10);
}
