import { type Console } from "./context.js";
import { h } from "./dom.js";
import { AccountTable, accountsHead } from "./accounts.js";

/**
 * The shop's staff: the admin accounts (`GET /accounts?role=admin`), each with its role
 * and state; an admin makes one a customer, disables or enables it (`PATCH
 * /accounts/{accountId}`), except the last enabled admin, which the service keeps.
 */
export function staffView(ctx: Console): HTMLElement {
  const table = new AccountTable(ctx, "admin", ["admin", "admins"], { roleChange: true });
  void table.pages.reload();
  const refresh = h("button", { type: "button", class: "secondary", onclick: () => void table.pages.reload() }, "Refresh");
  return h(
    "section",
    { "aria-labelledby": "staff-title" },
    h("div", { class: "title-row" }, h("h1", { id: "staff-title" }, "Staff"), refresh),
    h(
      "p",
      { class: "lead" },
      "The admin accounts. A disabled account's keys and password stop at once, and come back when it is enabled again. The shop keeps one enabled admin at least: make another person admin before you demote or disable the last.",
    ),
    h(
      "div",
      { class: "table-wrap" },
      h("table", { class: "accounts staff" }, h("caption", { class: "visually-hidden" }, "Staff accounts"), accountsHead(), table.rows),
    ),
    table.pages.footer,
  );
}
