import type { Account, Order, Pet } from "@acme-pets/petstore";
import { AccountTable, accountsHead } from "./accounts.js";
import { Pages, type Console } from "./context.js";
import { formatDateTime, h } from "./dom.js";
import { petsById } from "./lookup.js";
import { formatMoney, noteCurrency } from "./money.js";

/**
 * The shop's customers (`GET /accounts?role=customer`), a page at a time; open one to
 * see its orders, newest first (`GET /store/orders?accountId=`), and disable or enable
 * it.
 */
export function customersView(ctx: Console): HTMLElement {
  const table = new AccountTable(ctx, "customer", ["customer", "customers"], {
    roleChange: false,
    extra: (account, row) => [ctx.may("listOrders") && h("td", { "data-label": "Orders" }, ordersButton(ctx, account, row))],
  });
  void table.pages.reload();
  const refresh = h("button", { type: "button", class: "secondary", onclick: () => void table.pages.reload() }, "Refresh");
  return h(
    "section",
    { "aria-labelledby": "customers-title" },
    h("div", { class: "title-row" }, h("h1", { id: "customers-title" }, "Customers"), refresh),
    h("p", { class: "lead" }, "The accounts that signed up, oldest first. Open a customer's orders to see what they bought; a disabled customer's keys and password stop at once."),
    h(
      "div",
      { class: "table-wrap" },
      h(
        "table",
        { class: "accounts customers" },
        h("caption", { class: "visually-hidden" }, "Customer accounts"),
        ctx.may("listOrders") ? accountsHead("Orders") : accountsHead(),
        table.rows,
      ),
    ),
    table.pages.footer,
  );
}

/** The button that shows the customer's orders in a row beneath, and hides them again. */
function ordersButton(ctx: Console, account: Account, row: HTMLTableRowElement): HTMLButtonElement {
  const id = `orders-of-${account.id}`;
  const button = h("button", { type: "button", class: "secondary", "aria-expanded": "false", "aria-controls": id }, "Orders", h("span", { class: "visually-hidden" }, ` of ${account.email}`));
  let panel: HTMLTableRowElement | undefined;
  button.addEventListener("click", () => {
    if (panel?.isConnected) {
      panel.remove();
      button.setAttribute("aria-expanded", "false");
      return;
    }
    const columns = row.cells.length;
    panel = h("tr", { class: "editor customer-orders", id }, h("td", { colspan: columns }, customerOrders(ctx, account)));
    row.after(panel);
    button.setAttribute("aria-expanded", "true");
  });
  return button;
}

/** A customer's orders, newest first, a page at a time. */
function customerOrders(ctx: Console, account: Account): HTMLElement {
  const rows = h("tbody");
  const pages = new Pages<Order>(
    ctx,
    ["order", "orders"],
    (order) => order.id,
    () => ctx.client.orders.pages({ accountId: account.id, limit: 10 }),
    () => rows.replaceChildren(),
    async (orders, stale) => {
      const pets = await petsById(ctx, orders.map((o) => o.petId)).catch(() => new Map<number, Pet>());
      if (stale()) return;
      for (const order of orders) {
        noteCurrency(order.currency);
        const pet = order.petName ?? pets.get(order.petId)?.name ?? `Pet #${order.petId}`;
        rows.append(
          h(
            "tr",
            { "data-order-id": order.id },
            h("td", { "data-label": "Order" }, h("span", { class: "name" }, `#${order.id}`)),
            h("td", { "data-label": "Pet" }, pet),
            h("td", { "data-label": "Quantity" }, order.quantity),
            h("td", { "data-label": "Total" }, order.total === undefined ? "No price" : formatMoney(order.total, order.currency)),
            h("td", { "data-label": "Status" }, h("span", { class: `order-status ${order.status}` }, order.status)),
            h("td", { "data-label": "Placed" }, formatDateTime(order.createdAt)),
          ),
        );
      }
    },
  );
  void pages.reload();
  return h(
    "div",
    { class: "orders-of" },
    h(
      "table",
      { class: "orders" },
      h("caption", {}, `Orders of ${account.email}, newest first`),
      h("thead", {}, h("tr", {}, ...["Order", "Pet", "Quantity", "Total", "Status", "Placed"].map((t) => h("th", { scope: "col" }, t)))),
      rows,
    ),
    pages.footer,
  );
}
