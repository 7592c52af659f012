// "My orders": the signed-in customer's orders, newest first (`GET /store/orders`, which
// lists a customer's own), a page at a time; an open one (`placed`) can be cancelled
// (`DELETE /store/orders/{orderId}`, after a confirmation): its units go back on sale.

import type { ListOrdersQuery, Order, PageIterator } from "@acme-pets/petstore";
import { confirmAction, formatDateTime, h, put } from "../../console/src/dom.js";
import { formatMoney } from "../../console/src/money.js";
import type { Shop } from "./context.js";

const statusNames: Record<string, string> = { placed: "Open", completed: "Delivered", cancelled: "Cancelled" };

export function ordersView(shop: Shop): HTMLElement {
  const list = h("ul", { class: "orders" });
  const count = h("p", { class: "count", role: "status", tabindex: "-1" });
  const more = h("button", { type: "button", class: "secondary", hidden: true }, "Show older orders");
  // An admin lists every order: "my orders" are the account's own, asked for by id.
  const q: ListOrdersQuery = shop.account.role === "admin" ? { accountId: shop.account.id } : {};
  const pages: PageIterator<Order> = shop.client.orders.pages(q);
  let shown = 0;
  const next = async () => {
    const hadFocus = document.activeElement === more;
    more.disabled = true;
    put(count, "Loading…");
    try {
      const step = await pages.next();
      const page = step.done ? { items: [], hasNext: false } : step.value;
      list.append(...page.items.map((order) => orderItem(shop, order)));
      shown += page.items.length;
      more.hidden = !page.hasNext;
      put(count, shown === 0 ? "You have no orders yet." : `${shown} ${shown === 1 ? "order" : "orders"}${page.hasNext ? ", older ones to show" : ""}.`);
      if (hadFocus) (more.hidden ? count : more).focus();
    } catch (error) {
      put(count, "");
      shop.fail(error);
    } finally {
      more.disabled = false;
    }
  };
  more.addEventListener("click", () => void next());
  void next();
  return h("div", { class: "my-orders" }, h("h1", {}, "My orders"), count, list, h("div", { class: "pager" }, more));
}

function orderItem(shop: Shop, order: Order): HTMLLIElement {
  const heading = `order-${order.id}`;
  const item = h("li", { class: "card order", "data-order-id": order.id, "aria-labelledby": heading });
  const draw = (o: Order) => {
    const rows: [string, string][] = [
      ["Pet", o.petName ?? `Pet #${o.petId}`],
      ["Quantity", String(o.quantity)],
      ["Status", statusNames[o.status] ?? o.status],
      ["Placed", formatDateTime(o.createdAt)],
    ];
    if (o.total !== undefined && o.currency) rows.splice(2, 0, ["Total", formatMoney(o.total, o.currency)]);
    if (o.cancelledAt) rows.push(["Cancelled", formatDateTime(o.cancelledAt)]);
    if (o.completedAt) rows.push(["Delivered", formatDateTime(o.completedAt)]);
    put(
      item,
      h("h2", { id: heading, tabindex: "-1" }, `Order #${o.id}`),
      h("dl", {}, ...rows.flatMap(([term, value]) => [h("dt", {}, term), h("dd", { class: term === "Status" ? `status ${o.status}` : undefined }, value)])),
      o.status === "placed" ? h("button", { type: "button", class: "danger", onclick: (e: Event) => void cancel(e.currentTarget as HTMLButtonElement) }, "Cancel the order") : null,
    );
  };
  const cancel = async (button: HTMLButtonElement) => {
    const what = `${order.quantity} × ${order.petName ?? `pet #${order.petId}`}`;
    if (!(await confirmAction(`Cancel order #${order.id}?`, `${what}: the order is cancelled and the pet goes back on sale.`, "Cancel the order"))) {
      button.focus();
      return;
    }
    shop.clear();
    button.disabled = true;
    try {
      await shop.client.orders.cancel(order.id);
      // Read back: its cancellation time and status are the service's.
      draw(await shop.client.orders.get(order.id).catch(() => ({ ...order, status: "cancelled" })));
      shop.done(`Order #${order.id} is cancelled.`);
    } catch (error) {
      button.disabled = false;
      shop.fail(error);
    }
    item.querySelector<HTMLElement>("h2")?.focus();
  };
  draw(order);
  return item;
}
