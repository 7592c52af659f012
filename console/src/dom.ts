// A few helpers to build the page from elements. Text always goes in as text nodes,
// never as HTML, so a pet called "<img onerror=…>" is shown as its name.

type Child = Node | string | number | false | null | undefined;
type Attributes = Record<string, string | number | boolean | EventListener | undefined>;

/**
 * An element with attributes and children. An `on…` attribute given a function is an
 * event listener; `true` sets a boolean attribute, `false` and `undefined` leave it out.
 */
export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attributes: Attributes = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === false) continue;
    if (typeof value === "function") {
      element.addEventListener(name.slice(2), value);
    } else {
      element.setAttribute(name, value === true ? "" : String(value));
    }
  }
  element.append(...children.filter((c): c is Node | string | number => c !== false && c !== null && c !== undefined).map((c) => (typeof c === "number" ? String(c) : c)));
  return element;
}

/** A labelled form control: the label wraps the text and the control. */
export function field(label: string, control: HTMLElement, hint?: string): HTMLLabelElement {
  return h("label", { class: "field" }, h("span", { class: "label" }, label), control, hint ? h("span", { class: "hint" }, hint) : null);
}

/** Replaces the children of `parent`. */
export function put(parent: Element, ...children: Child[]): void {
  parent.replaceChildren(...children.filter((c): c is Node | string | number => c !== false && c !== null && c !== undefined).map((c) => (typeof c === "number" ? String(c) : c)));
}

/** A date-time as the reader's locale writes it. */
export function formatDateTime(iso: string): string {
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : date.toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" });
}

/**
 * The value of an `<input type="datetime-local">` for an RFC 3339 time, in the reader's
 * time zone (the control has no zone of its own).
 */
export function toLocalInput(iso: string | undefined): string {
  if (!iso) return "";
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return "";
  const local = new Date(date.getTime() - date.getTimezoneOffset() * 60_000);
  return local.toISOString().slice(0, 16);
}

/** A confirmation in a modal dialog; resolves true when the reader confirms. */
export function confirmAction(question: string, detail: string, confirmLabel: string): Promise<boolean> {
  return new Promise((resolve) => {
    // Escape closes the dialog with an empty returnValue: not confirmed.
    const dialog: HTMLDialogElement = h(
      "dialog",
      { class: "confirm", "aria-labelledby": "confirm-title", "aria-describedby": "confirm-detail" },
      h("h2", { id: "confirm-title" }, question),
      h("p", { id: "confirm-detail" }, detail),
      h(
        "div",
        { class: "actions" },
        h("button", { type: "button", class: "secondary", autofocus: true, onclick: () => dialog.close("cancel") }, "Keep it"),
        h("button", { type: "button", class: "danger", onclick: () => dialog.close("confirm") }, confirmLabel),
      ),
    );
    dialog.addEventListener("close", () => {
      resolve(dialog.returnValue === "confirm");
      dialog.remove();
    });
    document.body.append(dialog);
    dialog.showModal();
  });
}

const focusable = "a[href], button, input, select, textarea, summary, [tabindex]";

/**
 * Where focus is now, to put it back after an action: the action disables its button
 * (which drops focus to the body) and may draw the row anew (a new control in its
 * place). The returned function does nothing when focus is somewhere already.
 */
export function keepFocus(): () => void {
  const element = document.activeElement;
  if (!(element instanceof HTMLElement) || element === document.body) return () => {};
  const row = element.closest("tr");
  const key = row ? [...row.attributes].find((a) => a.name.startsWith("data-") && a.name.endsWith("-id")) : undefined;
  const index = row ? [...row.querySelectorAll(focusable)].indexOf(element) : -1;
  const [name, value] = key ? [key.name, key.value] : ["", ""];
  return () => {
    const now = document.activeElement;
    if (now !== null && now !== document.body) return;
    if (element.isConnected) {
      element.focus();
      return;
    }
    if (name === "" || index < 0) return;
    const again = document.querySelector(`tr[${name}="${CSS.escape(value)}"]`);
    again?.querySelectorAll<HTMLElement>(focusable)[index]?.focus();
  };
}

/**
 * Removes the rows of one item from a table. When focus was in them (or had fallen to
 * the body while the action ran), it goes to the next item's row, else the previous
 * one's, else the page's main area: a keyboard user keeps their place.
 */
export function removeRows(...rows: Element[]): void {
  const active = document.activeElement;
  const hadFocus = active === null || active === document.body || rows.some((r) => r.contains(active));
  const visible = (e: Element | null): e is HTMLElement => e instanceof HTMLElement && !e.hidden && !rows.includes(e);
  let target: Element | null = rows[rows.length - 1]?.nextElementSibling ?? null;
  while (target !== null && !visible(target)) target = target.nextElementSibling;
  if (target === null) {
    target = rows[0]?.previousElementSibling ?? null;
    while (target !== null && !visible(target)) target = target.previousElementSibling;
  }
  for (const row of rows) row.remove();
  if (!hadFocus) return;
  const control = target?.querySelector<HTMLElement>(focusable) ?? document.getElementById("main");
  control?.focus();
}
