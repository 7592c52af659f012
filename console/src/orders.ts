import { PetstoreError, type ListOrdersQuery, type Order, type Pet } from "@acme-pets/petstore";
import { Pages, type Console } from "./context.js";
import { confirmAction, field, formatDateTime, h, put, removeRows, toLocalInput } from "./dom.js";
import { petsById } from "./lookup.js";
import { formatMoney, noteCurrency } from "./money.js";
import { numberBounds, type OrderStatus } from "./rules.js";
import { cannotBeOrdered } from "./stock.js";

const pageSize = 25;

/**
 * Orders, newest first, a page at a time through the API's cursors: by status (placed,
 * the open ones, unless the reader asks for others), the day they were placed and the
 * customer. A placed order can be completed, given a ship date or cancelled, and the
 * row says what that did to the pet's stock and status.
 */
export function ordersView(ctx: Console): HTMLElement {
  const rows = h("tbody");
  const shown: OrderRow[] = [];
  // Why the orders name their customers by id rather than email (the key lacks accounts:read).
  const accountsHint = h("p", { class: "lead accounts-hint", hidden: true });

  const status = h("select", { name: "status" }, ...ctx.rules.orderStatuses.map((s) => h("option", { value: s, selected: s === "placed" }, s)), h("option", { value: "" }, "Any status"));
  const after = h("input", { type: "date", name: "createdAfter" });
  const before = h("input", { type: "date", name: "createdBefore" });
  const account = h("input", { type: "number", name: "accountId", ...numberBounds(ctx.rules.parameter("listOrders", "accountId")), step: 1, inputmode: "numeric", autocomplete: "off" });
  const filters = h(
    "form",
    { class: "filters", role: "search", "aria-label": "Find orders", onsubmit: (e: Event) => e.preventDefault() },
    field("Status", status),
    field("Placed on or after", after),
    field("Placed on or before", before),
    field("Account id", account),
  );
  /** The filters as the API takes them: days are the reader's own, from midnight to midnight. */
  function query(): ListOrdersQuery {
    const from = startOfDay(after.value, 0);
    const to = startOfDay(before.value, 1); // the API's bound is exclusive: the next midnight
    const accountId = Number(account.value);
    return {
      limit: pageSize,
      ...(status.value ? { status: status.value as OrderStatus } : {}),
      ...(from ? { createdAfter: from } : {}),
      ...(to ? { createdBefore: to } : {}),
      ...(Number.isInteger(accountId) && accountId > 0 ? { accountId } : {}),
    };
  }
  /** Whether an order still belongs in the list after it changed here. */
  const matches = (order: Order) => order.status !== "gone" && (status.value === "" || order.status === status.value);

  const pages = new Pages<Order>(
    ctx,
    ["order", "orders"],
    (order) => order.id,
    () => ctx.client.orders.pages(query()),
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
        noteCurrency(order.currency);
        const row = newRow(order, pets.get(order.petId));
        shown.push(row);
        rows.append(row.element);
      }
    },
  );
  /** A row of the list: it leaves when its order no longer matches the filters. */
  function newRow(order: Order, pet: Pet | undefined): OrderRow {
    const row: OrderRow = new OrderRow(ctx, order, pet, {
      changed: (now) => {
        if (matches(now)) return;
        removeRows(row.element);
        shown.splice(shown.indexOf(row), 1);
        pages.removed(order);
      },
      petChanged: (pet) => {
        for (const other of shown) other.showPet(pet);
      },
    });
    return row;
  }
  const live = followOrders(ctx, { query, matches, shown, rows, pages, newRow, reloads: () => reloads, loading: () => loading });
  // Every load of the list goes through reload, which the stream's gap filling watches.
  let reloads = 0;
  let loading: Promise<void> = Promise.resolve();
  const reload = () => {
    reloads++;
    loading = pages.reload();
    return loading;
  };
  const refresh = h("button", { type: "button", class: "secondary", onclick: () => void reload() }, "Refresh");
  void reload();
  for (const control of [status, after, before]) control.addEventListener("change", () => void reload());
  let typing: ReturnType<typeof setTimeout> | undefined;
  account.addEventListener("input", () => {
    clearTimeout(typing);
    typing = setTimeout(() => void reload(), 300);
  });

  return h(
    "section",
    { "aria-labelledby": "orders-title" },
    h("div", { class: "title-row" }, h("h1", { id: "orders-title" }, "Orders", " ", live), refresh),
    h("p", { class: "lead" }, "Newest first. Completing the last order of a pet with no stock left makes it sold; cancelling puts the quantity back in stock and keeps the order, cancelled."),
    filters,
    accountsHint,
    h(
      "div",
      { class: "table-wrap" },
      h(
        "table",
        { class: "orders" },
        h("caption", { class: "visually-hidden" }, "Orders, newest first"),
        h(
          "thead",
          {},
          h(
            "tr",
            {},
            h("th", { scope: "col" }, "Order"),
            h("th", { scope: "col" }, "Pet"),
            h("th", { scope: "col" }, "Quantity"),
            h("th", { scope: "col" }, "Total"),
            h("th", { scope: "col" }, "Status"),
            h("th", { scope: "col" }, "Ship date"),
            h("th", { scope: "col" }, h("span", { class: "visually-hidden" }, "Actions")),
          ),
        ),
        rows,
      ),
    ),
    pages.footer,
  );
}

/** What the live stream needs of the orders list. */
interface LiveOrders {
  query(): ListOrdersQuery;
  matches(order: Order): boolean;
  shown: OrderRow[];
  rows: HTMLElement;
  pages: Pages<Order>;
  newRow(order: Order, pet: Pet | undefined): OrderRow;
  /** How many loads of the list were begun, and the last one. */
  reloads(): number;
  loading(): Promise<void>;
}

/**
 * Follows the event stream: an order placed anywhere shows at the top of the list when the
 * filters take it, one completed or cancelled changes (or leaves) its row. Returns the
 * "Live" mark, shown while the stream is open.
 */
function followOrders(ctx: Console, list: LiveOrders): HTMLElement {
  const { shown } = list;
  /** Whether the list, as its filters stand, takes the order and does not show it yet. */
  function wanted(order: Order): boolean {
    const q = list.query();
    return (
      list.matches(order) &&
      (q.accountId === undefined || order.accountId === q.accountId) &&
      (q.createdAfter === undefined || Date.parse(order.createdAt) >= Date.parse(q.createdAfter)) &&
      (q.createdBefore === undefined || Date.parse(order.createdAt) < Date.parse(q.createdBefore)) &&
      !shown.some((row) => row.id === order.id)
    );
  }
  async function placed(order: Order): Promise<void> {
    const load = list.reloads();
    if (!wanted(order)) return;
    const [pets] = await Promise.all([petsById(ctx, [order.petId]), ctx.accounts.load([order.accountId])]);
    // A load begun meanwhile shows it, if its filters take it.
    if (list.reloads() !== load || !wanted(order)) return;
    noteCurrency(order.currency);
    const row = list.newRow(order, pets.get(order.petId));
    shown.unshift(row);
    list.rows.prepend(row.element);
    list.pages.added(order);
  }
  const live = h("span", { class: "live", hidden: true }, "Live");
  let opened = false;
  ctx.live(
    (event) => {
      const order = event.data as Order;
      if (event.type === "order.placed") void placed(order).catch(() => {});
      else if (event.type === "order.completed" || event.type === "order.cancelled") shown.find((row) => row.id === order.id)?.update(order);
    },
    () => {
      live.hidden = false;
      if (opened) return;
      opened = true;
      // Orders placed between the list's first page and the stream's opening: once the
      // list is loaded, the first page again, and the orders not shown, oldest first so
      // that the newest ends on top. A load begun meanwhile shows them itself: the
      // filling then stops.
      void (async () => {
        const before = list.reloads();
        await list.loading();
        const { value } = await ctx.client.orders.pages(list.query()).next();
        for (const order of [...(value?.items ?? [])].reverse()) {
          if (list.reloads() !== before) return;
          await placed(order);
        }
      })().catch(() => {});
    },
  );
  return live;
}

/** The instant a local day (`YYYY-MM-DD`, plus `days`) starts, as RFC 3339; undefined for none. */
function startOfDay(day: string, days: number): string | undefined {
  const [y, m, d] = day.split("-").map(Number);
  if (!y || !m || !d) return undefined;
  return new Date(y, m - 1, d + days).toISOString();
}

interface RowEvents {
  /** The order changed (completed, cancelled, or found so): the list drops it when it no longer matches. */
  changed(order: Order): void;
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

  get id(): number {
    return this.order.id;
  }

  /** Shows the order as it is now (the live stream told of a change made elsewhere). */
  update(order: Order): void {
    if (order.id !== this.order.id) return;
    this.changed(order);
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
      h("span", { class: "name" }, order.petName ?? pet?.name ?? `Pet #${order.petId}`),
      " ",
      h("span", { class: "id" }, `#${order.petId}`),
      // The pet now: what an action on a placed order would change.
      order.status === "placed" ? h("span", { class: "pet-state" }, pet ? petState(pet) : "removed") : null,
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
      this.order = await this.ctx.client.orders.get(this.order.id);
      this.render();
      this.events.changed(this.order);
    } catch (error) {
      // Gone altogether (a service before orders were kept): no status matches it.
      if (error instanceof PetstoreError && error.status === 404) this.events.changed({ ...this.order, status: "gone" });
    }
    await this.reloadPet().catch(() => "");
  }

  /** Shows the order as an action left it, and lets the list drop it when it no longer matches. */
  private changed(order: Order): void {
    this.order = order;
    this.render();
    this.events.changed(order);
  }

  private render(): void {
    const { order, ctx } = this;
    const label = `order ${order.id}`;

    const complete = h("button", { type: "button" }, "Complete", h("span", { class: "visually-hidden" }, ` ${label}`));
    complete.addEventListener("click", () =>
      void this.act(complete, async () => {
        const now = await ctx.client.orders.update(order.id, { complete: true });
        const pet = await this.reloadPet().catch(() => ""); // done either way
        this.changed(now);
        ctx.done(`Order ${order.id} is complete.${pet}`);
      }),
    );

    const cancel = h("button", { type: "button", class: "danger" }, "Cancel", h("span", { class: "visually-hidden" }, ` ${label}`));
    cancel.addEventListener("click", () => {
      void confirmAction(
        `Cancel order ${order.id}?`,
        `${order.quantity} × ${order.petName ?? this.pet?.name ?? `pet #${order.petId}`} go back into stock. The order stays, cancelled; this cannot be undone.`,
        "Cancel order",
      ).then((yes) => {
        if (!yes) return;
        void this.act(cancel, async () => {
          await ctx.client.orders.cancel(order.id);
          const [now, pet] = await Promise.all([
            ctx.client.orders.get(order.id).catch(() => ({ ...this.order, status: "cancelled" })),
            this.reloadPet().catch(() => ""), // done either way
          ]);
          this.changed(now);
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

    const placed = order.status === "placed";
    this.renderPet();
    this.element.dataset.status = order.status;
    put(
      this.element,
      h("td", { "data-label": "Order" }, h("span", { class: "name" }, `#${order.id}`), " ", h("span", { class: "id" }, ctx.accounts.label(order.accountId))),
      this.petCell,
      h("td", { "data-label": "Quantity" }, order.quantity),
      h("td", { "data-label": "Total", class: "money" }, ...totalCell(order)),
      h("td", { "data-label": "Status" }, h("span", { class: `order-status ${order.status}` }, order.status), ...lifeDates(order)),
      h("td", { "data-label": "Ship date" }, placed && ctx.may("updateOrder") ? dateForm : order.shipDate ? formatDateTime(order.shipDate) : "None"),
      h("td", { class: "row-actions" }, ...(placed ? [ctx.may("updateOrder") && complete, ctx.may("cancelOrder") && cancel] : [])),
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

/** The order's total, and its unit price beneath; an order from before prices has neither. */
function totalCell(order: Order): (HTMLElement | string)[] {
  if (order.total === undefined) return [h("span", { class: "muted" }, "No price")];
  return [
    h("span", { class: "name" }, formatMoney(order.total, order.currency)),
    order.unitPrice === undefined ? "" : h("span", { class: "pet-state" }, `${order.quantity} × ${formatMoney(order.unitPrice, order.currency)}`),
  ];
}

/** When the order was placed, and completed or cancelled. */
function lifeDates(order: Order): HTMLElement[] {
  const line = (what: string, iso: string | undefined) => (iso ? [h("span", { class: "pet-state" }, `${what} ${formatDateTime(iso)}`)] : []);
  return [...line("Placed", order.createdAt), ...line("Completed", order.completedAt), ...line("Cancelled", order.cancelledAt)];
}

/** A pet's status and stock, and when it is `available` with none, that it cannot be ordered. */
function petState(pet: Pet): string {
  return `${pet.status}, stock ${pet.stock}${cannotBeOrdered(pet) ? " (cannot be ordered until restocked)" : ""}`;
}
