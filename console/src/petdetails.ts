// A pet's description and tags on the Stock screen: the fields that edit them, how a row
// shows them, and the tag filter's reading of its field.
//
// Tags are typed in one field, separated by commas. The console only splits and trims:
// a repeated tag (in any case) or one tag too many is the service's to refuse, and its
// message says which (PetTags: told apart without regard to case, each kept as written).

import { PetstoreError } from "@acme-pets/petstore";
import { h } from "./dom.js";
import type { Rules } from "./rules.js";

/** The schema whose bounds a form holds to: a new pet's, or a patch's. */
type PetSchema = "NewPet" | "PetPatch";

/** The tags written in a field: split at commas, each trimmed, empty ones left out. */
export function parseTags(text: string): string[] {
  return text
    .split(",")
    .map((tag) => tag.trim())
    .filter((tag) => tag !== "");
}

/** Tags as a field shows them. */
export function formatTags(tags: readonly string[]): string {
  return tags.join(", ");
}

/** Whether two lists of tags are the same, in order and case (a tag keeps the case it was written in). */
export function sameTags(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((tag, i) => tag === b[i]);
}

/** A pet's tags as chips, or that it has none. */
export function tagChips(tags: readonly string[]): HTMLElement {
  if (tags.length === 0) return h("span", { class: "muted" }, "No tags");
  return h("ul", { class: "tags" }, ...tags.map((tag) => h("li", {}, tag)));
}

/** A pet's description in its row: its first lines (the edit form holds it whole). */
export function descriptionText(description: string | undefined): HTMLElement | null {
  return description ? h("span", { class: "pet-description" }, description) : null;
}

/** The tags field: one text input, comma-separated, with the document's rules said beside it. */
export function tagsField(rules: Rules, schema: PetSchema, tags: readonly string[]): { label: HTMLLabelElement; input: HTMLInputElement } {
  const list = rules.field(schema, "tags");
  const each = rules.items(schema, "tags");
  // No maxlength: the field holds a list, and the bounds are of its items; the hint says them.
  const input = h("input", { type: "text", name: "tags", autocomplete: "off", spellcheck: "false", value: formatTags(tags) });
  const rule = [list.maxItems === undefined ? "" : `up to ${list.maxItems}`, each.maxLength === undefined ? "" : `each up to ${each.maxLength} characters`].filter(Boolean).join(", ");
  const hint = `Separate tags with commas${rule ? `: ${rule}` : ""}. Calm and calm are one tag.`;
  const label = h("label", { class: "field wide" }, h("span", { class: "label" }, "Tags"), input, h("span", { class: "hint" }, hint));
  return { label, input };
}

/**
 * The description field: a textarea held to the document's maxLength, the limit said
 * in its hint and the characters used counted beside it (what maxlength counts, so the
 * count reaches the limit where typing stops). `recount` shows the count again after the
 * value was set by a script or a form reset, which fire no input event.
 */
export function descriptionField(
  rules: Rules,
  schema: PetSchema,
  description: string | undefined,
): { label: HTMLLabelElement; textarea: HTMLTextAreaElement; recount: () => void } {
  const max = rules.field(schema, "description").maxLength;
  const textarea = h("textarea", { name: "description", rows: 3, maxlength: max }, description ?? "");
  const limit = max === undefined ? "" : ` Up to ${max.toLocaleString()} characters.`;
  // The count is for the eye: read on every key it would talk over the typing, and the
  // hint tells a screen reader the limit.
  const count = h("span", { class: "char-count", "aria-hidden": "true" });
  const recount = () => {
    count.textContent = max === undefined ? "" : `${textarea.value.length.toLocaleString()} / ${max.toLocaleString()}`;
  };
  textarea.addEventListener("input", recount);
  recount();
  const label = h("label", { class: "field wide" }, h("span", { class: "label" }, "Description"), textarea, h("span", { class: "hint" }, `Optional; line breaks are kept.${limit}`, " ", count));
  return { label, textarea, recount };
}

/**
 * Marks the fields a refusal names (its details' `field`: `tags[1]` is the tags field)
 * invalid and focuses the first, so that the service's message, shown in the page's
 * notice, points at its field. Fields it does not name are marked valid again.
 */
export function flagRefusedFields(error: unknown, fields: Record<string, HTMLElement>): void {
  const named = new Set(error instanceof PetstoreError ? error.details.map((d) => d.field.replace(/\[\d+\]$/, "")) : []);
  let first: HTMLElement | undefined;
  for (const [name, control] of Object.entries(fields)) {
    if (named.has(name)) {
      control.setAttribute("aria-invalid", "true");
      first ??= control;
    } else {
      control.removeAttribute("aria-invalid");
    }
  }
  first?.focus();
}
