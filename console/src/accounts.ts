// What the staff and customers screens share: a page of the accounts of one role
// (`GET /accounts?role=`), each row with its state and the changes an admin makes to it
// (`PATCH /accounts/{accountId}`: the role, disabled or not), under the service's
// last-admin rule, whose refusal says what to do.

import { PetstoreError, type Account, type AccountPatch, type Role } from "@acme-pets/petstore";
import { Pages, type Console } from "./context.js";
import { confirmAction, formatDateTime, h, put } from "./dom.js";

/** The most accounts a page of the list asks for. */
const pageSize = 25;

/** One account's row: its cells, and what it does when changed. */
export interface AccountRowOptions {
  /** The cells after the email, role and state (the customers screen's orders button). */
  extra?: (account: Account, row: HTMLTableRowElement) => (HTMLElement | false)[];
  /** Whether the row offers the role change (staff: yes; customers: no, an admin is invited). */
  roleChange: boolean;
}

/** A table of the accounts of `role`, a page at a time, each row with its actions. */
export class AccountTable {
  readonly rows = h("tbody");
  readonly pages: Pages<Account>;

  constructor(
    private readonly ctx: Console,
    role: Role,
    noun: [string, string],
    private readonly options: AccountRowOptions,
  ) {
    this.pages = new Pages<Account>(
      ctx,
      noun,
      (account) => account.id,
      () => ctx.client.accounts.pages({ role, limit: pageSize }),
      () => this.rows.replaceChildren(),
      (accounts) => {
        for (const account of accounts) this.rows.append(this.row(account));
      },
    );
  }

  /** A row more at the top (an account that arrived here, say accepted meanwhile). */
  prepend(account: Account): void {
    this.rows.prepend(this.row(account));
    this.pages.added(account);
  }

  private row(account: Account): HTMLTableRowElement {
    const row = h("tr", { "data-account-id": account.id });
    this.render(row, account);
    return row;
  }

  private render(row: HTMLTableRowElement, account: Account): void {
    const { ctx } = this;
    const you = account.id === ctx.account.id;
    row.classList.toggle("disabled", account.disabled === true);
    const actions: HTMLElement[] = [];
    if (ctx.may("updateAccount")) {
      if (this.options.roleChange) actions.push(this.roleButton(row, account, you));
      actions.push(this.stateButton(row, account, you));
    }
    put(
      row,
      h("td", { "data-label": "Email" }, h("span", { class: "name" }, account.email), you ? h("span", { class: "badge current" }, "You") : null, " ", h("span", { class: "id" }, `#${account.id}`)),
      h("td", { "data-label": "Role" }, h("span", { class: "role" }, account.role)),
      h("td", { "data-label": "State" }, account.disabled ? h("span", { class: "badge account-disabled" }, "Disabled") : "Enabled"),
      h("td", { "data-label": "Since" }, formatDateTime(account.createdAt)),
      ...(this.options.extra?.(account, row) ?? []).filter((e): e is HTMLElement => e !== false),
      h("td", { class: "row-actions" }, ...actions),
    );
  }

  /** Makes an admin a customer (demote), or a customer back an admin. */
  private roleButton(row: HTMLTableRowElement, account: Account, you: boolean): HTMLButtonElement {
    const to: "admin" | "customer" = account.role === "admin" ? "customer" : "admin";
    const label = to === "customer" ? "Make customer" : "Make admin";
    const button = h("button", { type: "button", class: to === "customer" ? "danger" : "secondary" }, label, h("span", { class: "visually-hidden" }, ` ${account.email}`));
    button.addEventListener("click", () => {
      const detail =
        to === "customer"
          ? `${account.email} loses the staff role: the account's keys${you ? ", this console's among them," : ""} may then do only what a customer may, from the next request.`
          : `${account.email} becomes staff: the account's keys may do what an admin may, within their scopes.`;
      void confirmAction(`${label}: ${account.email}?`, detail, label).then((yes) => {
        if (yes) void this.change(row, account, button, { role: to });
      });
    });
    return button;
  }

  /** Disables an account (its keys and password stop at once), or enables it again. */
  private stateButton(row: HTMLTableRowElement, account: Account, you: boolean): HTMLButtonElement {
    const disable = account.disabled !== true;
    const label = disable ? "Disable" : "Enable";
    const button = h("button", { type: "button", class: disable ? "danger" : "secondary" }, label, h("span", { class: "visually-hidden" }, ` ${account.email}`));
    button.addEventListener("click", () => {
      if (!disable) {
        void this.change(row, account, button, { disabled: false });
        return;
      }
      const detail = `Its keys and its password stop at once${you ? ": this console's key too, which signs you out" : ""}. The keys are kept: enabling the account again brings them back.`;
      void confirmAction(`Disable ${account.email}?`, detail, "Disable").then((yes) => {
        if (yes) void this.change(row, account, button, { disabled: true });
      });
    });
    return button;
  }

  private change(row: HTMLTableRowElement, account: Account, button: HTMLButtonElement, patch: AccountPatch): Promise<void> {
    const { ctx } = this;
    return ctx.run(button, async () => {
      let now: Account;
      try {
        now = await ctx.client.accounts.update(account.id, patch);
      } catch (error) {
        if (error instanceof PetstoreError && error.code === "last_admin") {
          ctx.fail(new Error(lastAdmin(account, patch)));
          return;
        }
        throw error;
      }
      this.render(row, now);
      const what = patch.role !== undefined ? `is now ${now.role === "admin" ? "an admin" : `a ${now.role}`}` : now.disabled ? "is disabled: its keys and password stop" : "is enabled again";
      ctx.done(`${now.email} ${what}.`);
      // The console's own account: a change may have stopped or narrowed this key; the
      // next call says so (a 401 signs out). Make it now rather than at the next click.
      if (now.id === ctx.account.id) await ctx.client.accounts.me();
    });
  }
}

/** The last-admin refusal, as the person who asked reads it. */
export function lastAdmin(account: Account, patch: AccountPatch): string {
  const what = patch.disabled === true ? "disabled" : "made a customer";
  return `Not changed: ${account.email} is the last enabled admin, so it cannot be ${what} — nobody could manage the shop's accounts any more. Make another person admin first (invite them), then try again.`;
}

/** The header row of an accounts table, with the extra columns' titles. */
export function accountsHead(...extra: string[]): HTMLTableSectionElement {
  return h(
    "thead",
    {},
    h(
      "tr",
      {},
      ...["Email", "Role", "State", "Since", ...extra].map((title) => h("th", { scope: "col" }, title)),
      h("th", { scope: "col" }, h("span", { class: "visually-hidden" }, "Actions")),
    ),
  );
}
