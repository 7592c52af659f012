import type { Delivery, Webhook } from "@acme-pets/petstore";
import { Pages, type Console } from "./context.js";
import { formatDateTime, h, put } from "./dom.js";
import { EventPanel } from "./eventpanel.js";
import { readableTypes } from "./events.js";

/**
 * The deliveries of one endpoint, oldest first as the API lists them, under the
 * endpoints: each one's event, status, attempts, last answer or error and next attempt,
 * with "Retry" on a failed one. Deliveries change on their own (the service sends and
 * retries in the background): Refresh reads them again.
 */
export class DeliveriesPanel {
  readonly element = h("section", { class: "deliveries", hidden: true, "aria-labelledby": "deliveries-title", tabindex: "-1" });
  private hook: Webhook | undefined;
  private opener: HTMLElement | undefined;
  private readonly title = h("h2", { id: "deliveries-title" });
  private readonly rows = h("tbody");
  private readonly pages: Pages<Delivery>;
  private readonly refresh: HTMLButtonElement;
  /** A delivery's event, opened from its row: what was sent. */
  private readonly event: EventPanel;
  /** The types whose events this key may open (a test event is not in the feed). */
  private readonly readable: Set<string>;

  constructor(private readonly ctx: Console) {
    this.event = new EventPanel(ctx);
    this.readable = new Set(ctx.may("getEvent") ? readableTypes(ctx) : []);
    this.pages = new Pages<Delivery>(
      ctx,
      ["delivery", "deliveries"],
      (d) => d.id,
      () => ctx.client.deliveries.pages(this.hook?.id ?? 0, { limit: 25 }),
      () => {
        this.rows.replaceChildren();
        this.event.clear();
      },
      (deliveries) => {
        for (const d of deliveries) this.rows.append(this.row(d));
      },
    );
    const refresh = (this.refresh = h("button", { type: "button", class: "secondary", onclick: () => void this.pages.reload() }, "Refresh", h("span", { class: "visually-hidden" }, " the deliveries")));
    const close = h("button", { type: "button", class: "secondary", onclick: () => this.close() }, "Close", h("span", { class: "visually-hidden" }, " the deliveries"));
    put(
      this.element,
      h("div", { class: "title-row" }, this.title, h("div", { class: "actions" }, refresh, close)),
      h("p", { class: "lead" }, "Oldest first. A failed delivery is sent again by Retry, with a fresh 72 hours of attempts; an endpoint that is disabled must be enabled first."),
      h(
        "div",
        { class: "table-wrap" },
        h(
          "table",
          { class: "deliveries" },
          h("caption", { class: "visually-hidden" }, "Deliveries, oldest first"),
          h(
            "thead",
            {},
            h(
              "tr",
              {},
              ...["Event", "Status", "Attempts", "Last attempt", "Next attempt"].map((title) => h("th", { scope: "col" }, title)),
              h("th", { scope: "col" }, h("span", { class: "visually-hidden" }, "Actions")),
            ),
          ),
          this.rows,
        ),
      ),
      this.pages.footer,
      this.event.element,
    );
    this.element.addEventListener("keydown", (e) => {
      if (e.key === "Escape" && !(e.target instanceof HTMLElement && e.target.closest("dialog"))) this.close();
    });
  }

  /** Shows the deliveries of `hook`; focus goes to the panel, and back to `from` when it closes. */
  async open(hook: Webhook, from: HTMLElement): Promise<void> {
    this.hook = hook;
    this.opener = from;
    put(this.title, "Deliveries to ", h("span", { class: "url" }, hook.url));
    this.element.hidden = false;
    this.element.focus();
    await this.pages.reload();
  }

  /** The endpoint changed (a test sent, enabled or disabled): its deliveries are read again when shown. */
  changed(hook: Webhook): void {
    if (this.element.hidden || this.hook?.id !== hook.id) return;
    this.hook = hook;
    void this.pages.reload();
  }

  /** The endpoint was deleted: its deliveries are gone too. */
  gone(webhookId: number): void {
    if (this.hook?.id === webhookId) this.close();
  }

  private close(): void {
    this.element.hidden = true;
    this.hook = undefined;
    this.rows.replaceChildren();
    if (this.opener?.isConnected) this.opener.focus();
    this.opener = undefined;
  }

  private row(d: Delivery): HTMLTableRowElement {
    const row = h("tr", { "data-delivery-id": d.id });
    this.fill(row, d);
    return row;
  }

  private fill(row: HTMLTableRowElement, d: Delivery): void {
    const retry = h("button", { type: "button", class: "secondary" }, "Retry", h("span", { class: "visually-hidden" }, ` ${d.eventType} ${d.eventId}`));
    retry.addEventListener("click", () => {
      const hook = this.hook;
      if (hook === undefined) return;
      void this.ctx.run(retry, async () => {
        const now = await this.ctx.client.deliveries.retry(hook.id, d.id);
        this.fill(row, now);
        // Retry is gone from the row (the delivery is pending): Refresh is what comes next.
        if (!row.contains(document.activeElement)) this.refresh.focus();
        this.ctx.done(`The delivery of ${d.eventId} is ${now.status} again${now.status === "pending" ? ", due now: Refresh shows how it went" : ""}.`);
      });
    });
    const last = [
      d.lastAttemptAt ? formatDateTime(d.lastAttemptAt) : d.status === "succeeded" ? "At the first attempt" : "None yet",
      d.responseStatus !== undefined ? h("span", { class: "pet-state" }, `HTTP ${d.responseStatus}`) : null,
      d.lastError ? h("span", { class: "pet-state warn last-error" }, d.lastError) : null,
    ];
    const open = h("button", { type: "button", class: "secondary" }, "Open event", h("span", { class: "visually-hidden" }, ` ${d.eventType} ${d.eventId}`));
    open.addEventListener("click", () => void this.event.open(d.eventId, open));
    put(
      row,
      h("td", { "data-label": "Event" }, h("span", { class: "name" }, d.eventType), h("code", { class: "pet-state event-id" }, d.eventId)),
      h("td", { "data-label": "Status" }, h("span", { class: `delivery-status ${d.status}` }, d.status)),
      h("td", { "data-label": "Attempts", class: "attempts" }, d.attempts),
      h("td", { "data-label": "Last attempt", class: "last-attempt" }, ...last),
      h("td", { "data-label": "Next attempt" }, d.nextAttemptAt ? formatDateTime(d.nextAttemptAt) : "None"),
      h(
        "td",
        { class: "row-actions" },
        h("div", { class: "actions" }, this.readable.has(d.eventType) && open, d.status === "failed" && this.ctx.may("retryDelivery") && (this.hook?.enabled ? retry : h("span", { class: "hint" }, "Enable the endpoint to retry"))),
      ),
    );
  }
}
