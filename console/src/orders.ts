import { PetstoreError, type Order, type Pet } from "@acme-pets/petstore";
import { Pages, type Console } from "./context.js";
import { confirmAction, formatDateTime, h, put, removeRows, toLocalInput } from "./dom.js";
import { petsById } from "./lookup.js";
import { cannotBeOrdered } from "./stock.js";

const pageSize = 25;

/**
 * Open (incomplete) orders, oldest first (the API lists by id): complete one, set its ship
 * date, or cancel it, and see what that did to the pet's stock and status.
 */
export function ordersView(ctx: Console): HTMLElement {
  const rows = h("tbody");
  const shown: OrderRow[] = [];
  // Why the orders name their customers by id rather than email (the key lacks accounts:read).
  const accountsHint = h("p", { class: "lead accounts-hint", hidden: true });
  const pages = new Pages<Order>(
    ctx,
    ["open order", "open orders"],
    (order) => order.id,
    () => ctx.client.orders.pages({ complete: false, limit: pageSize }),
    () => {
      rows.replaceChildren();
      shown.length = 0;
    },
    async (orders, stale) => {
      const [pets, unnamed] = await Promise.all([petsById(ctx, orders.map((o) => o.petId)), ctx.accounts.load(orders.map((o) => o.accountId))]);
      if (stale()) return;
      accountsHint.hidden = unnamed === undefined;
      put(accountsHint, unnamed ?? "");
      for (const order of orders) {
        const row = new OrderRow(ctx, order, pets.get(order.petId), {
          closed: () => {
            removeRows(row.element);
            shown.splice(shown.indexOf(row), 1);
            pages.removed(order);
          },
          petChanged: (pet) => {
            for (const other of shown) other.showPet(pet);
          },
        });
        shown.push(row);
        rows.append(row.element);
      }
    },
  );
  const refresh = h("button", { type: "button", class: "secondary", onclick: () => void pages.reload() }, "Refresh");
  void pages.reload();

  return h(
    "section",
    { "aria-labelledby": "orders-title" },
    h("div", { class: "title-row" }, h("h1", { id: "orders-title" }, "Open orders"), refresh),
    h("p", { class: "lead" }, "Oldest first. Completing the last order of a pet with no stock left makes it sold; cancelling puts the quantity back in stock."),
    accountsHint,
    h(
      "div",
      { class: "table-wrap" },
      h(
        "table",
        { class: "orders" },
        h("caption", { class: "visually-hidden" }, "Open orders, oldest first"),
        h(
          "thead",
          {},
          h("tr", {}, h("th", { scope: "col" }, "Order"), h("th", { scope: "col" }, "Pet"), h("th", { scope: "col" }, "Quantity"), h("th", { scope: "col" }, "Ship date"), h("th", { scope: "col" }, h("span", { class: "visually-hidden" }, "Actions"))),
        ),
        rows,
      ),
    ),
    pages.footer,
  );
}

interface RowEvents {
  /** The order is complete or cancelled: it leaves the list of open orders. */
  closed(): void;
  /** The pet's stock or status changed: every row of that pet shows it. */
  petChanged(pet: Pet): void;
}

class OrderRow {
  readonly element: HTMLTableRowElement;
  private readonly petCell: HTMLTableCellElement;

  constructor(
    private readonly ctx: Console,
    private order: Order,
    private pet: Pet | undefined,
    private readonly events: RowEvents,
  ) {
    this.element = h("tr", { "data-order-id": order.id });
    this.petCell = h("td", { "data-label": "Pet" });
    this.render();
  }

  showPet(pet: Pet): void {
    if (pet.id !== this.order.petId) return;
    this.pet = pet;
    this.renderPet();
  }

  private renderPet(): void {
    const { pet, order } = this;
    put(
      this.petCell,
      h("span", { class: "name" }, pet?.name ?? `Pet #${order.petId}`),
      " ",
      h("span", { class: "id" }, `#${order.petId}`),
      h("span", { class: "pet-state" }, pet ? petState(pet) : "removed"),
    );
  }

  /**
   * Runs an action on the order. When the service refuses it (the customer cancelled, or
   * another person completed it, meanwhile), its message is shown and the row shows what
   * the service holds: an order that is gone or complete leaves the open orders.
   */
  private act(button: HTMLButtonElement, action: () => Promise<void>): Promise<void> {
    return this.ctx.run(button, async () => {
      try {
        await action();
      } catch (error) {
        this.ctx.fail(error);
        await this.resync();
      }
    });
  }

  private async resync(): Promise<void> {
    try {
      const order = await this.ctx.client.orders.get(this.order.id);
      if (order.complete) {
        this.events.closed();
      } else {
        this.order = order;
        this.render();
      }
    } catch (error) {
      if (error instanceof PetstoreError && error.status === 404) this.events.closed();
    }
    await this.reloadPet().catch(() => "");
  }

  private render(): void {
    const { order, ctx } = this;
    const label = `order ${order.id}`;

    const complete = h("button", { type: "button" }, "Complete", h("span", { class: "visually-hidden" }, ` ${label}`));
    complete.addEventListener("click", () =>
      void this.act(complete, async () => {
        this.order = await ctx.client.orders.update(order.id, { complete: true });
        const pet = await this.reloadPet().catch(() => ""); // done either way
        this.events.closed();
        ctx.done(`Order ${order.id} is complete.${pet}`);
      }),
    );

    const cancel = h("button", { type: "button", class: "danger" }, "Cancel", h("span", { class: "visually-hidden" }, ` ${label}`));
    cancel.addEventListener("click", () => {
      void confirmAction(
        `Cancel order ${order.id}?`,
        `${order.quantity} × ${this.pet?.name ?? `pet #${order.petId}`} go back into stock. The customer's order is gone; this cannot be undone.`,
        "Cancel order",
      ).then((yes) => {
        if (!yes) return;
        void this.act(cancel, async () => {
          await ctx.client.orders.cancel(order.id);
          const pet = await this.reloadPet().catch(() => ""); // done either way
          this.events.closed();
          ctx.done(`Order ${order.id} was cancelled.${pet}`);
        });
      });
    });

    const shipDate = h("input", { type: "datetime-local", name: "shipDate", required: true, value: toLocalInput(order.shipDate), "aria-label": `Ship date of ${label}` });
    const setDate = h("button", { type: "submit", class: "secondary" }, "Set", h("span", { class: "visually-hidden" }, ` ship date of ${label}`));
    const dateForm = h("form", { class: "inline" }, shipDate, setDate);
    dateForm.addEventListener("submit", (event) => {
      event.preventDefault();
      // The control holds local time without a zone; the API takes RFC 3339.
      const when = new Date(shipDate.value);
      if (Number.isNaN(when.getTime())) {
        ctx.fail(new Error("Choose a ship date and time first."));
        return;
      }
      void this.act(setDate, async () => {
        this.order = await ctx.client.orders.update(order.id, { shipDate: when.toISOString() });
        this.render();
        ctx.done(`Order ${order.id} ships ${this.order.shipDate ? formatDateTime(this.order.shipDate) : "without a date"}.`);
      });
    });

    this.renderPet();
    put(
      this.element,
      h("td", { "data-label": "Order" }, h("span", { class: "name" }, `#${order.id}`), " ", h("span", { class: "id" }, ctx.accounts.label(order.accountId))),
      this.petCell,
      h("td", { "data-label": "Quantity" }, order.quantity),
      h("td", { "data-label": "Ship date" }, dateForm),
      h("td", { class: "row-actions" }, complete, cancel),
    );
  }

  /** Loads the order's pet (its status and stock) again; says what they are now. */
  private async reloadPet(): Promise<string> {
    const pet = (await petsById(this.ctx, [this.order.petId])).get(this.order.petId);
    if (pet === undefined) return "";
    this.events.petChanged(pet);
    return ` ${pet.name} is ${petState(pet)}.`;
  }
}

/** A pet's status and stock, and when it is `available` with none, that it cannot be ordered. */
function petState(pet: Pet): string {
  return `${pet.status}, stock ${pet.stock}${cannotBeOrdered(pet) ? " (cannot be ordered until restocked)" : ""}`;
}
