import type { NewWebhook, Webhook, WebhookWithSecret } from "@acme-pets/petstore";
import { Pages, type Console } from "./context.js";
import { DeliveriesPanel } from "./deliveries.js";
import { confirmAction, field, formatDateTime, h, put, removeRows } from "./dom.js";
import { readableTypes } from "./events.js";
import { textBounds } from "./rules.js";

/** The overlaps a rotation offers: how long the replaced secret keeps signing. */
const overlaps = [
  { seconds: 86_400, label: "24 hours (the default): switch the receiver to the new secret within a day" },
  { seconds: 3_600, label: "1 hour" },
  { seconds: 0, label: "None: the old secret stops signing at once (it leaked)" },
] as const;

/**
 * Webhook endpoints: each with what it subscribes to and whether it is enabled (and, when
 * the service disabled it, why); add one (its secret shown once), send it a test event,
 * disable or enable it, rotate its secret with the overlap chosen, remove it, and see its
 * deliveries (retry a failed one there). Each control only when the key may make its call.
 */
export function webhooksView(ctx: Console): HTMLElement {
  const rows = h("tbody");
  const secretBox = h("div", { class: "created", hidden: true, tabindex: "-1" });
  const deliveries = new DeliveriesPanel(ctx);
  const pages = new Pages<Webhook>(
    ctx,
    ["endpoint", "endpoints"],
    (w) => w.id,
    () => ctx.client.webhooks.pages({ limit: 25 }),
    () => rows.replaceChildren(),
    (hooks) => {
      for (const hook of hooks) rows.append(new WebhookRow(ctx, hook, secretBox, deliveries, () => pages.removed(hook)).element);
    },
  );
  void pages.reload();

  const add = ctx.may("createWebhook") ? addWebhookForm(ctx, (hook) => {
    const row = new WebhookRow(ctx, hook, secretBox, deliveries, () => pages.removed(hook));
    rows.append(row.element);
    pages.added(hook);
    showSecret(ctx, secretBox, hook, `Endpoint ${hook.url} added`);
  }) : null;

  return h(
    "section",
    { "aria-labelledby": "webhooks-title" },
    h("div", { class: "title-row" }, h("h1", { id: "webhooks-title" }, "Webhooks"), h("button", { type: "button", class: "secondary", onclick: () => void pages.reload() }, "Refresh")),
    h(
      "p",
      { class: "lead" },
      "Endpoints the shop sends signed events to as they happen. A delivery that fails is retried for 72 hours; an endpoint that fails all that time is disabled, and says why.",
    ),
    add && h("details", { class: "add" }, h("summary", {}, "Add an endpoint"), add),
    secretBox,
    h(
      "div",
      { class: "table-wrap" },
      h(
        "table",
        { class: "webhooks" },
        h("caption", { class: "visually-hidden" }, "Webhook endpoints, by id"),
        h(
          "thead",
          {},
          h(
            "tr",
            {},
            ...["Endpoint", "Events", "State"].map((title) => h("th", { scope: "col" }, title)),
            h("th", { scope: "col" }, h("span", { class: "visually-hidden" }, "Actions")),
          ),
        ),
        rows,
      ),
    ),
    pages.footer,
    deliveries.element,
  );
}

/** "Add an endpoint": URL, description, and every type or some. */
function addWebhookForm(ctx: Console, added: (hook: WebhookWithSecret) => void): HTMLFormElement {
  const url = h("input", { type: "url", name: "url", required: true, ...textBounds(ctx.rules.field("NewWebhook", "url")), autocomplete: "off", spellcheck: "false", placeholder: "https://" });
  const description = h("input", { type: "text", name: "description", ...textBounds(ctx.rules.field("NewWebhook", "description")), autocomplete: "off" });
  const every = h("input", { type: "radio", name: "eventChoice", value: "all" });
  const some = h("input", { type: "radio", name: "eventChoice", value: "some", checked: true });
  // An endpoint is sent only the types the key that subscribes it may read.
  const types = readableTypes(ctx);
  const boxes = types.map((t) => h("input", { type: "checkbox", name: "events", value: t }));
  const max = ctx.rules.field("NewWebhook", "events").maxItems;
  const enable = () => boxes.forEach((b) => (b.disabled = every.checked));
  every.addEventListener("change", enable);
  some.addEventListener("change", enable);
  const submit = h("button", { type: "submit" }, "Add endpoint");
  const form = h(
    "form",
    { class: "add webhook-form" },
    field("URL", url, "Where the events are posted: https:// on a public address"),
    field("Description", description, "Optional"),
    h(
      "fieldset",
      { class: "choices" },
      h("legend", {}, "Events"),
      h("label", { class: "choice" }, every, " Every type, those added later too"),
      h("label", { class: "choice" }, some, " Only these:"),
      h("ul", { class: "event-list" }, ...types.map((t, i) => h("li", {}, h("label", {}, boxes[i], " ", h("code", {}, t))))),
    ),
    submit,
  );
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const chosen = every.checked ? ["*"] : boxes.filter((b) => b.checked).map((b) => b.value);
    if (chosen.length === 0 || (max !== undefined && chosen.length > max)) {
      ctx.fail(new Error(chosen.length === 0 ? "Choose the event types to send, or every type." : `Choose at most ${max} types, or every type.`));
      (boxes.find((b) => b.checked) ?? boxes[0])?.focus();
      return;
    }
    const request: NewWebhook = { url: url.value.trim(), events: chosen as NewWebhook["events"], ...(description.value ? { description: description.value } : {}) };
    void ctx.run(submit, async () => {
      const hook = await ctx.client.webhooks.create(request);
      form.reset();
      enable();
      added(hook);
    });
  });
  return form;
}

/** A new or rotated secret, shown this once, with a button that copies it. */
function showSecret(ctx: Console, box: HTMLElement, hook: WebhookWithSecret, title: string): void {
  const secret = h("input", { type: "text", readonly: true, value: hook.secret, class: "secret", "aria-label": `The signing secret of ${hook.url}`, spellcheck: "false" });
  const copied = h("span", { role: "status" });
  const copy = h("button", { type: "button" }, "Copy secret");
  copy.addEventListener("click", () => {
    secret.select();
    const writing = navigator.clipboard?.writeText(hook.secret) ?? Promise.reject(new Error("no clipboard"));
    writing.then(
      () => put(copied, "Copied."),
      () => put(copied, "Selected: copy it with Ctrl+C (⌘C)."),
    );
  });
  const hide = h("button", { type: "button", class: "secondary", onclick: () => ((box.hidden = true), box.replaceChildren()) }, "I have saved it");
  put(
    box,
    h("h2", {}, title),
    h("p", {}, "Copy the signing secret now: this is the only time the service shows it. The receiver checks each delivery's signature with it."),
    h("div", { class: "inline" }, secret, copy, hide),
    copied,
    hook.previousSecretExpiresAt ? h("p", { class: "hint" }, `The old secret keeps signing too until ${formatDateTime(hook.previousSecretExpiresAt)}.`) : null,
  );
  box.hidden = false;
  box.focus();
  ctx.done(`${title}.`);
}

/** One endpoint's row: what it receives, its state, and what may be done with it. */
class WebhookRow {
  readonly element: HTMLTableRowElement;

  constructor(
    private readonly ctx: Console,
    private hook: Webhook,
    private readonly secretBox: HTMLElement,
    private readonly deliveries: DeliveriesPanel,
    private readonly removed: () => void,
  ) {
    this.element = h("tr", { "data-webhook-id": hook.id });
    this.render();
  }

  private render(): void {
    const { ctx, hook } = this;
    const name = ` ${hook.url}`;
    const label = (text: string) => [text, h("span", { class: "visually-hidden" }, name)];
    const button = (text: string, cls: string, action: (b: HTMLButtonElement) => void) => {
      const b = h("button", { type: "button", class: cls }, ...label(text));
      b.addEventListener("click", () => action(b));
      return b;
    };
    put(
      this.element,
      h("td", { "data-label": "Endpoint" }, h("span", { class: "name url" }, hook.url), " ", h("span", { class: "id" }, `#${hook.id}`), hook.description ? h("span", { class: "pet-state" }, hook.description) : null),
      h("td", { "data-label": "Events", class: "subscribed" }, hook.events.length === 1 && hook.events[0] === "*" ? "Every type" : h("ul", { class: "scopes" }, ...hook.events.map((e) => h("li", {}, h("code", {}, e))))),
      h("td", { "data-label": "State", class: "state" }, ...stateCell(hook)),
      h(
        "td",
        { class: "row-actions" },
        h(
          "div",
          { class: "actions" },
          ctx.may("listDeliveries") && button("Deliveries", "secondary", (b) => void this.deliveries.open(hook, b)),
          ctx.may("sendTestEvent") && button("Send test", "secondary", (b) => this.sendTest(b)),
          ctx.may("updateWebhook") && button(hook.enabled ? "Disable" : "Enable", "secondary", (b) => this.setEnabled(b, !hook.enabled)),
          ctx.may("rotateWebhookSecret") && button("Rotate secret", "secondary", (b) => this.rotate(b)),
          ctx.may("deleteWebhook") && button("Delete", "danger", (b) => this.remove(b)),
        ),
      ),
    );
  }

  private sendTest(b: HTMLButtonElement): void {
    void this.ctx.run(b, async () => {
      const delivery = await this.ctx.client.webhooks.sendTest(this.hook.id);
      this.deliveries.changed(this.hook);
      this.ctx.done(`Sent a test event (${delivery.eventId}) to ${this.hook.url}: see its delivery under Deliveries.`);
    });
  }

  private setEnabled(b: HTMLButtonElement, enabled: boolean): void {
    // ctx.run puts focus back on the button drawn in its place (Enable for Disable).
    const act = () =>
      this.ctx.run(b, async () => {
        this.hook = await this.ctx.client.webhooks.update(this.hook.id, { enabled });
        this.render();
        this.deliveries.changed(this.hook);
        this.ctx.done(
          enabled
            ? `${this.hook.url} is enabled again. Retry the failed deliveries you still want sent under Deliveries.`
            : `${this.hook.url} is disabled: nothing is sent to it, and its pending deliveries failed.`,
        );
      });
    if (enabled) {
      void act();
      return;
    }
    void confirmAction(`Disable ${this.hook.url}?`, "Nothing is sent to it until it is enabled again, and its pending deliveries fail (they can be retried then).", "Disable").then((yes) => {
      if (yes) void act();
    });
  }

  private rotate(b: HTMLButtonElement): void {
    void chooseOverlap(this.hook).then((overlapSeconds) => {
      if (overlapSeconds === undefined) return;
      void this.ctx.run(b, async () => {
        const hook = await this.ctx.client.webhooks.rotateSecret(this.hook.id, { overlapSeconds });
        this.hook = hook;
        this.render();
        showSecret(this.ctx, this.secretBox, hook, `New secret for ${hook.url}`);
      });
    });
  }

  private remove(b: HTMLButtonElement): void {
    void confirmAction(`Delete the endpoint ${this.hook.url}?`, "Nothing more is sent to it and its deliveries are deleted; the events stay in the feed. This cannot be undone.", "Delete endpoint").then((yes) => {
      if (!yes) return;
      void this.ctx.run(b, async () => {
        await this.ctx.client.webhooks.delete(this.hook.id);
        this.deliveries.gone(this.hook.id);
        removeRows(this.element);
        this.removed();
        this.ctx.done(`The endpoint ${this.hook.url} was deleted.`);
      });
    });
  }
}

/** The state of an endpoint in words (not colour alone): enabled, failing, disabled and why, a rotation's overlap. */
function stateCell(hook: Webhook): (Node | string)[] {
  const out: (Node | string)[] = [];
  out.push(hook.enabled ? h("span", { class: "badge enabled" }, "Enabled") : h("span", { class: "badge disabled" }, "Disabled"));
  if (!hook.enabled) out.push(h("span", { class: "pet-state reason" }, hook.disabledReason ?? "Disabled by an admin."));
  if (hook.failingSince) out.push(h("span", { class: "pet-state warn" }, `Failing since ${formatDateTime(hook.failingSince)}`));
  if (hook.previousSecretExpiresAt) out.push(h("span", { class: "pet-state" }, `The old secret signs too until ${formatDateTime(hook.previousSecretExpiresAt)}`));
  return out;
}

/** Asks how long the replaced secret keeps signing; undefined when the reader cancels. */
function chooseOverlap(hook: Webhook): Promise<number | undefined> {
  return new Promise((resolve) => {
    const radios = overlaps.map((o, i) => h("input", { type: "radio", name: "overlap", value: o.seconds, checked: i === 0 }));
    const form = h(
      "form",
      { method: "dialog" },
      h("h2", { id: "rotate-title" }, `Rotate the secret of ${hook.url}?`),
      h("p", { id: "rotate-detail" }, "A new secret signs every delivery from now on; the new secret is shown once."),
      h("fieldset", { class: "choices" }, h("legend", {}, "The old secret keeps signing for"), ...overlaps.map((o, i) => h("label", { class: "choice" }, radios[i], ` ${o.label}`))),
      h(
        "div",
        { class: "actions" },
        h("button", { type: "button", class: "secondary", onclick: () => dialog.close("cancel") }, "Keep it"),
        h("button", { type: "submit", value: "rotate" }, "Rotate secret"),
      ),
    );
    const dialog: HTMLDialogElement = h("dialog", { class: "confirm rotate", "aria-labelledby": "rotate-title", "aria-describedby": "rotate-detail" }, form);
    dialog.addEventListener("close", () => {
      const chosen = radios.find((r) => r.checked);
      resolve(dialog.returnValue === "rotate" && chosen ? Number(chosen.value) : undefined);
      dialog.remove();
    });
    document.body.append(dialog);
    dialog.showModal();
    radios[0]?.focus();
  });
}
