import type { Invitation } from "@acme-pets/petstore";
import { type Console } from "./context.js";
import { field, formatDateTime, h, put } from "./dom.js";
import { AccountTable, accountsHead } from "./accounts.js";

/**
 * The shop's staff: the admin accounts (`GET /accounts?role=admin`), each with its role
 * and state; an admin makes one a customer, disables or enables it (`PATCH
 * /accounts/{accountId}`), except the last enabled admin, which the service keeps; and
 * invites a person (`POST /invitations`): the one-time link, to copy, and whether the
 * service mailed it.
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
    ctx.may("createInvitation") && inviteForm(ctx),
    h(
      "div",
      { class: "table-wrap" },
      h("table", { class: "accounts staff" }, h("caption", { class: "visually-hidden" }, "Staff accounts"), accountsHead(), table.rows),
    ),
    table.pages.footer,
  );
}

/** "Invite a person": email and role; the link is shown once, with a copy button. */
function inviteForm(ctx: Console): HTMLElement {
  const email = h("input", { type: "email", name: "email", required: true, autocomplete: "off", spellcheck: "false" });
  const role = h("select", { name: "role" }, h("option", { value: "admin", selected: true }, "admin (staff)"), h("option", { value: "customer" }, "customer"));
  const submit = h("button", { type: "submit" }, "Invite");
  const created = h("div", { class: "created", hidden: true, tabindex: "-1" });
  const form = h("form", { class: "add invite-form" }, field("Email", email, "The person's address"), field("Role", role), submit);
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    void ctx.run(submit, async () => {
      const invitation = await ctx.client.invitations.create({ email: email.value.trim(), role: role.value as "admin" | "customer" });
      form.reset();
      showInvitation(ctx, created, invitation);
    });
  });
  return h("div", {}, h("details", { class: "add" }, h("summary", {}, "Invite a person"), form), created);
}

/** The invitation's one-time link, shown this once, and whether it was mailed. */
function showInvitation(ctx: Console, box: HTMLElement, invitation: Invitation): void {
  const link = h("input", { type: "text", readonly: true, value: invitation.url, class: "secret", "aria-label": `The invitation link for ${invitation.email}`, spellcheck: "false" });
  const copy = h("button", { type: "button" }, "Copy link");
  const copied = h("span", { role: "status" });
  copy.addEventListener("click", () => {
    link.select();
    // The clipboard API needs a secure context (https or localhost); elsewhere the
    // link is selected for the reader to copy.
    const writing = navigator.clipboard?.writeText(invitation.url) ?? Promise.reject(new Error("no clipboard"));
    writing.then(
      () => put(copied, "Copied."),
      () => put(copied, "Selected: copy it with Ctrl+C (⌘C)."),
    );
  });
  const hide = h("button", { type: "button", class: "secondary", onclick: () => ((box.hidden = true), box.replaceChildren()) }, "Done");
  const mailed = invitation.mailed
    ? `It was mailed to ${invitation.email}; you may also give it yourself.`
    : `It was not mailed (this server sends no mail): give it to ${invitation.email} yourself, over a channel you trust.`;
  put(
    box,
    h("h2", {}, `${invitation.email} is invited as ${invitation.role}`),
    h("p", { class: "invitation-mailed" }, mailed),
    h("p", {}, `The link works once, until ${formatDateTime(invitation.expiresAt)}: whoever opens it chooses the account's password. This is the only time the console shows it.`),
    h("div", { class: "inline" }, link, copy, hide),
    copied,
  );
  box.hidden = false;
  box.focus();
  ctx.done(`Invited ${invitation.email}${invitation.mailed ? " (mailed)" : ""}.`);
}
