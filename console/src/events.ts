import type { Event as FeedEvent, ListEventsQuery } from "@acme-pets/petstore";
import { Pages, type Console } from "./context.js";
import { field, formatDateTime, h } from "./dom.js";
import { about, EventPanel } from "./eventpanel.js";

const pageSize = 25;

/**
 * The event feed (`GET /events`), oldest first as the API gives it, a page at a time;
 * "Load more" follows the feed's links (every page that holds events has one, where
 * later events will be) until a page comes back empty: caught up. A type filter keeps one type (only the types the key may read are offered: the
 * feed leaves the others out anyway). An event opens (`GET /events/{eventId}`) in a
 * panel that shows its data as the API sent it, from its row or by its id.
 */
export function eventsView(ctx: Console): HTMLElement {
  const rows = h("tbody");
  const readable = readableTypes(ctx);
  const type = h("select", { name: "type" }, h("option", { value: "" }, "Every type"), ...readable.map((t) => h("option", { value: t }, t)));
  const filters = h("form", { class: "filters", role: "search", "aria-label": "Filter the feed", onsubmit: (e: Event) => e.preventDefault() }, field("Type", type));
  const detail = new EventPanel(ctx);

  const pages = new Pages<FeedEvent>(
    ctx,
    ["event", "events"],
    (event) => event.id,
    () => ctx.client.events.pages({ limit: pageSize, ...(type.value ? { type: type.value as NonNullable<ListEventsQuery["type"]> } : {}) }),
    () => rows.replaceChildren(),
    (events) => {
      for (const event of events) rows.append(eventRow(ctx, event, detail));
    },
  );
  type.addEventListener("change", () => void pages.reload());
  void pages.reload();

  return h(
    "section",
    { "aria-labelledby": "events-title" },
    h("div", { class: "title-row" }, h("h1", { id: "events-title" }, "Event feed"), h("button", { type: "button", class: "secondary", onclick: () => void pages.reload() }, "Refresh")),
    h(
      "p",
      { class: "lead" },
      "What happened in the shop, oldest first, as webhook endpoints are sent it (tests excepted). Events are kept 30 days. Load more reads on until you are caught up; Refresh starts again from the oldest.",
    ),
    h("div", { class: "feed-tools" }, filters, ctx.may("getEvent") && openByIdForm(detail)),
    detail.element,
    h(
      "div",
      { class: "table-wrap" },
      h(
        "table",
        { class: "events" },
        h("caption", { class: "visually-hidden" }, "Events, oldest first"),
        h(
          "thead",
          {},
          h(
            "tr",
            {},
            ...["Type", "When", "About", "Event id"].map((title) => h("th", { scope: "col" }, title)),
            h("th", { scope: "col" }, h("span", { class: "visually-hidden" }, "Actions")),
          ),
        ),
        rows,
      ),
    ),
    pages.footer,
  );
}

/**
 * The types of the document's feed this key may read: a key limited to some scopes sees
 * only the types whose reading scope it holds (the feed leaves out the others, and a
 * filter naming one is refused).
 */
export function readableTypes(ctx: Console): string[] {
  const scopes = ctx.account.key?.scopes;
  return ctx.rules
    .eventTypes()
    .filter((t) => scopes === undefined || t.scope === undefined || scopes.includes(t.scope))
    .map((t) => t.type);
}

function eventRow(ctx: Console, event: FeedEvent, detail: EventPanel): HTMLTableRowElement {
  const open = h("button", { type: "button", class: "secondary" }, "Open", h("span", { class: "visually-hidden" }, ` ${event.type} ${event.id}`));
  open.addEventListener("click", () => void detail.open(event.id, open));
  return h(
    "tr",
    { "data-event-id": event.id },
    h("td", { "data-label": "Type" }, h("span", { class: "name event-type" }, event.type)),
    h("td", { "data-label": "When" }, formatDateTime(event.createdAt)),
    h("td", { "data-label": "About", class: "about" }, about(event)),
    h("td", { "data-label": "Event id" }, h("code", { class: "event-id" }, event.id)),
    h("td", { class: "row-actions" }, ctx.may("getEvent") && open),
  );
}

/** "Open an event": by its id, as a delivery or a receiver's log names it. */
function openByIdForm(detail: EventPanel): HTMLFormElement {
  const id = h("input", { type: "text", name: "eventId", required: true, pattern: "evt_[A-Za-z0-9]+", maxlength: 30, autocomplete: "off", spellcheck: "false", placeholder: "evt_…" });
  const submit = h("button", { type: "submit", class: "secondary" }, "Open event");
  const form = h("form", { class: "filters open-event", "aria-label": "Open an event by id" }, field("Event id", id), submit);
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    void detail.open(id.value.trim(), submit);
  });
  return form;
}
