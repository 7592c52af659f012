import type { Event as FeedEvent } from "@acme-pets/petstore";
import type { Console } from "./context.js";
import { formatDateTime, h, put } from "./dom.js";

/** One line on what an event tells of, by its type (the data's shape is the type's). */
export function about(event: Pick<FeedEvent, "type" | "data">): string {
  const d = event.data as unknown as Record<string, unknown>;
  const s = (key: string) => (typeof d[key] === "string" || typeof d[key] === "number" ? String(d[key]) : "?");
  const family = event.type.split(".")[0];
  switch (family) {
    case "order":
      return `Order #${s("id")}: ${s("quantity")} × ${typeof d.petName === "string" ? d.petName : `pet #${s("petId")}`}, ${s("status")}`;
    case "pet":
    case "inventory":
      return "petId" in d ? `Pet #${s("petId")}: stock ${s("quantity")}, ${s("status")}` : `${s("name")} (pet #${s("id")}): ${s("status")}`;
    case "api_key":
      return `Key ${s("name")} (${s("prefix")}…) of ${s("accountEmail")}`;
    case "webhook":
      return `Endpoint ${s("url")}`;
    default:
      return "";
  }
}

/** The panel that shows one event read with `GET /events/{eventId}`. */
export class EventPanel {
  readonly element = h("section", { class: "event-detail", hidden: true, "aria-labelledby": "event-detail-title", tabindex: "-1" });
  private opener: HTMLElement | undefined;

  constructor(private readonly ctx: Console) {
    this.element.addEventListener("keydown", (e) => {
      if (e.key === "Escape") this.close();
    });
  }

  /** Reads the event and shows it; focus goes to the panel, and back to `from` when it closes. */
  async open(id: string, from: HTMLButtonElement): Promise<void> {
    await this.ctx.run(from, async () => {
      const event = await this.ctx.client.events.get(id);
      this.opener = from;
      this.show(event);
    });
  }

  private show(event: FeedEvent): void {
    const close = h("button", { type: "button", class: "secondary", onclick: () => this.close() }, "Close", h("span", { class: "visually-hidden" }, " the event"));
    put(
      this.element,
      h("div", { class: "title-row" }, h("h2", { id: "event-detail-title" }, `${event.type} `, h("code", {}, event.id)), close),
      h(
        "dl",
        { class: "facts" },
        h("div", {}, h("dt", {}, "When"), h("dd", {}, formatDateTime(event.createdAt))),
        h("div", {}, h("dt", {}, "About"), h("dd", {}, about(event))),
      ),
      h("p", { class: "hint", id: "event-data-label" }, "Its data, as the API sent it:"),
      h("pre", { class: "event-data", tabindex: "0", "aria-labelledby": "event-data-label" }, JSON.stringify(event.data, null, 2)),
    );
    this.element.hidden = false;
    this.element.focus();
  }

  /** Hides the panel, focus left where it is (the list it belongs to changed). */
  clear(): void {
    this.element.hidden = true;
    this.element.replaceChildren();
  }

  private close(): void {
    this.element.hidden = true;
    this.element.replaceChildren();
    if (this.opener?.isConnected) this.opener.focus();
    else document.getElementById("main")?.focus();
  }
}
