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
