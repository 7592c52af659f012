import type { Category, InventoryItem, Pet } from "@acme-pets/petstore";
import { Pages, type Console } from "./context.js";
import { petsById } from "./lookup.js";
import { confirmAction, field, h, put, removeRows } from "./dom.js";
import { formatMoney, moneyInput, noteCurrency, parseMoney, shopCurrency } from "./money.js";
import { descriptionField, descriptionText, flagRefusedFields, parseTags, sameTags, tagChips, tagsField } from "./petdetails.js";
import { photosPanel, rowThumbnail } from "./petphotos.js";
import { numberBounds, textBounds, type Status } from "./rules.js";

// The status changes offered are those staff may make by hand (the contract's store rule
// 7, the document's PetStatus x-transitions: ctx.rules); the service decides, and its
// refusal is shown when the pet changed meanwhile. The bounds of the fields are the
// document's too.

const thresholdStorage = "petstore.console.lowStock";
const pageSize = 25;

/** Stock at a glance: every pet with its category, status and stock, a page at a time. */
export function stockView(ctx: Console): HTMLElement {
  const search = h("input", { type: "search", name: "name", maxlength: ctx.rules.parameter("listPets", "name").maxLength, autocomplete: "off" });
  // Several tags, comma-separated: the pets that have all of them (tag, repeated).
  const tagFilter = h("input", { type: "text", name: "tag", autocomplete: "off", spellcheck: "false", placeholder: "calm, small" });
  const category = h("select", { name: "categoryId" }, h("option", { value: "" }, "All categories"));
  const status = h("select", { name: "status" }, h("option", { value: "" }, "Any status"), ...ctx.rules.petStatuses.map((s) => h("option", { value: s }, s)));
  // A threshold of stock: within the bounds of a pet's stock.
  const threshold = h("input", { type: "number", name: "lowStock", ...numberBounds(ctx.rules.field("Pet", "stock")), inputmode: "numeric", value: localStorage.getItem(thresholdStorage) ?? "3" });
  const rows = h("tbody");
  const shown: PetRow[] = [];

  const pages = new Pages<Pet>(
    ctx,
    ["pet", "pets"],
    (pet) => pet.id,
    () => {
      const name = search.value.trim();
      const tag = parseTags(tagFilter.value);
      return ctx.client.pets.pages({
        limit: pageSize,
        ...(name ? { name } : {}),
        ...(tag.length > 0 ? { tag } : {}),
        ...(status.value ? { status: status.value as Status } : {}),
        ...(category.value ? { categoryId: Number(category.value) } : {}),
      });
    },
    () => {
      rows.replaceChildren();
      shown.length = 0;
    },
    async (pets, stale) => {
      // Each pet carries its stock: no inventory lookup beside the page.
      const categories = await ctx.categories();
      if (stale()) return;
      for (const pet of pets) {
        noteCurrency(pet.currency);
        const row = new PetRow(ctx, pet, categories, lowStock, () => {
          removeRows(row.element, row.editor);
          pages.removed(pet);
        });
        shown.push(row);
        rows.append(row.element, row.editor);
      }
    },
  );

  function lowStock(): number {
    const n = Number(threshold.value);
    return Number.isInteger(n) && n >= 0 ? n : 0;
  }

  let typing: ReturnType<typeof setTimeout> | undefined;
  const reloadWhenTyped = () => {
    clearTimeout(typing);
    typing = setTimeout(() => void pages.reload(), 300);
  };
  search.addEventListener("input", reloadWhenTyped);
  tagFilter.addEventListener("input", reloadWhenTyped);
  category.addEventListener("change", () => void pages.reload());
  status.addEventListener("change", () => void pages.reload());
  threshold.addEventListener("input", () => {
    localStorage.setItem(thresholdStorage, String(lowStock()));
    for (const row of shown) row.highlight();
  });

  const filters = h(
    "form",
    { class: "filters", role: "search", "aria-label": "Find pets", onsubmit: (e: Event) => e.preventDefault() },
    field("Search by name", search),
    field("With all of the tags", tagFilter),
    field("Category", category),
    field("Status", status),
    field("Low stock at or below", threshold),
  );

  void ctx.categories().then(
    (all) => category.append(...categoryOptions(all)),
    (error: unknown) => ctx.fail(error),
  );
  void pages.reload();
  // Live: stock and status changes made anywhere (an order, another person) show here.
  const live = followStock(ctx, shown);

  return h(
    "section",
    { "aria-labelledby": "stock-title" },
    h("h1", { id: "stock-title" }, "Stock", " ", live),
    filters,
    ctx.may("createPet") &&
    addPetForm(ctx, (pet, categories) => {
      const row = new PetRow(ctx, pet, categories, lowStock, () => {
        removeRows(row.element, row.editor);
        pages.removed(pet);
      });
      shown.unshift(row);
      rows.prepend(row.element, row.editor);
      pages.added(pet);
    }),
    h(
      "div",
      { class: "table-wrap" },
      h(
        "table",
        { class: "stock" },
        h("caption", {}, "Pets, by id. Change a status or a stock count in place; the service applies the store rules. Edit a pet to set or remove its price, description and tags."),
        h(
          "thead",
          {},
          h(
            "tr",
            {},
            h("th", { scope: "col" }, "Pet"),
            h("th", { scope: "col" }, "Category"),
            h("th", { scope: "col" }, "Tags"),
            h("th", { scope: "col" }, "Price"),
            h("th", { scope: "col" }, "Status"),
            h("th", { scope: "col" }, "Stock"),
            h("th", { scope: "col" }, h("span", { class: "visually-hidden" }, "Actions")),
          ),
        ),
        rows,
      ),
    ),
    pages.footer,
  );
}

/**
 * Follows the event stream: stock changed anywhere (an order, another person) shows in the
 * rows. Returns the "Live" mark, shown while the stream is open.
 */
function followStock(ctx: Console, shown: PetRow[]): HTMLElement {
  const live = h("span", { class: "live", hidden: true }, "Live");
  let opened = false;
  ctx.live(
    (event) => {
      if (event.type === "inventory.updated" || event.type === "pet.sold_out" || event.type === "pet.restocked") {
        const item = event.data as InventoryItem;
        for (const row of shown) row.showStock(item);
      }
    },
    () => {
      live.hidden = false;
      if (opened) return;
      opened = true;
      // Stock that changed between the page's loading and the stream's opening.
      void petsById(ctx, shown.map((row) => row.petId)).then(
        (pets) => {
          for (const pet of pets.values()) for (const row of shown) row.showStock({ petId: pet.id, quantity: pet.stock, status: pet.status });
        },
        () => {},
      );
    },
  );
  return live;
}

export function categoryOptions(categories: Map<number, Category>, selected?: number): HTMLOptionElement[] {
  return [...categories.values()]
    .sort((a, b) => a.name.localeCompare(b.name))
    .map((c) => h("option", { value: c.id, selected: c.id === selected }, c.name));
}

/**
 * One pet's row: status and stock edit in place; edit and remove. Each control is there
 * only when the console's key may make its call; otherwise the row shows the value.
 */
class PetRow {
  readonly element: HTMLTableRowElement;
  readonly editor: HTMLTableRowElement;

  constructor(
    private readonly ctx: Console,
    private pet: Pet,
    private readonly categories: Map<number, Category>,
    private readonly lowStock: () => number,
    private readonly onRemoved: () => void,
  ) {
    this.element = h("tr");
    this.editor = h("tr", { class: "editor", hidden: true });
    this.render();
  }

  /** Loads the pet (with its stock) again. */
  private async refresh(): Promise<void> {
    const pets = await petsById(this.ctx, [this.pet.id]);
    this.pet = pets.get(this.pet.id) ?? this.pet;
  }

  get petId(): number {
    return this.pet.id;
  }

  /**
   * Shows a stock count the live stream told of. A row being edited keeps what the reader
   * typed: only the highlight follows until it is left.
   */
  showStock(item: InventoryItem): void {
    // Nothing new (the stream's catch-up when it opens, or the event of a change this row
    // made and shows already): drawn again, the row would flicker and its controls be
    // replaced under the reader's pointer.
    if (item.petId !== this.pet.id || (item.quantity === this.pet.stock && item.status === this.pet.status)) return;
    this.pet = { ...this.pet, status: item.status, stock: item.quantity };
    if (this.element.contains(document.activeElement) || this.editor.contains(document.activeElement)) {
      this.highlight();
      return;
    }
    this.render();
  }

  /** Marks the row sold out (stock 0) or low (at or below the threshold). */
  highlight(): void {
    const stock = this.pet.stock;
    const soldOut = stock === 0;
    const low = !soldOut && stock <= this.lowStock();
    this.element.classList.toggle("sold-out", soldOut);
    this.element.classList.toggle("low", low);
    const badge = this.element.querySelector<HTMLElement>(".badge");
    if (badge) {
      badge.hidden = !soldOut && !low;
      put(badge, soldOut ? "Sold out" : low ? "Low stock" : "");
    }
  }

  private render(): void {
    const { pet, ctx } = this;
    const category = this.categories.get(pet.categoryId);
    this.element.dataset.petId = String(pet.id);

    // The stock input comes first: the warning below offers it ("Restock instead").
    const stockInput = h("input", {
      type: "number",
      name: "quantity",
      ...numberBounds(ctx.rules.field("InventoryUpdate", "quantity")),
      step: 1,
      required: true,
      inputmode: "numeric",
      value: pet.stock,
      "aria-label": `Stock of ${pet.name}`,
    });
    const save = h("button", { type: "submit", class: "secondary" }, "Save", h("span", { class: "visually-hidden" }, ` stock of ${pet.name}`));
    const stockForm = h("form", { class: "inline" }, stockInput, save);
    stockForm.addEventListener("submit", (event) => {
      event.preventDefault();
      const quantity = Number(stockInput.value);
      void ctx.run(save, async () => {
        try {
          const item = await ctx.client.inventory.set(pet.id, { quantity });
          this.pet = { ...this.pet, status: item.status, stock: item.quantity };
          ctx.done(`${this.pet.name}: stock ${item.quantity}, ${item.status}.`);
        } catch (error) {
          // Refused (a count out of range, the pet gone): the row goes back to what the
          // service holds.
          ctx.fail(error);
          await this.refresh().catch(() => {});
        }
        this.render();
      });
    });

    // `available` is not "can be ordered": an order needs stock too. A pet that is
    // available with none says so beside its status.
    const unorderable = h(
      "span",
      { class: "pet-state warn", id: `pet-${pet.id}-orderable`, hidden: !cannotBeOrdered(pet) },
      "Stock 0: cannot be ordered until restocked.",
    );

    // A select and a button, not a select that acts on change: arrow keys on a closed
    // select change its value (and fire change) on some systems, one sale per key press.
    // A status the document does not know (added later) offers no change.
    const moves = ctx.rules.transitions(pet.status);
    const statusSelect = h(
      "select",
      { name: "status", "aria-label": `Status of ${pet.name}`, "aria-describedby": unorderable.id, disabled: moves.length === 0 },
      h("option", { value: pet.status, selected: true }, pet.status),
      ...moves.map((s) => h("option", { value: s }, `→ ${s}`)),
    );
    const setStatus = h("button", { type: "submit", class: "secondary", disabled: moves.length === 0 }, "Set", h("span", { class: "visually-hidden" }, ` status of ${pet.name}`));
    const statusForm = h("form", { class: "inline status" }, statusSelect, setStatus);

    // Choosing `available` for a pet with no stock: the rules allow it (staff decide), but
    // customers still cannot order it, and a restock is what makes it orderable (a count
    // above 0 makes a sold or pending pet with no open order available by itself).
    const restockInstead = h("button", { type: "button", class: "secondary" }, "Restock instead");
    restockInstead.addEventListener("click", () => {
      statusSelect.value = pet.status;
      put(choice, "");
      stockInput.focus();
      stockInput.select();
    });
    const choice = h("span", { class: "choice warn", role: "status" });
    statusSelect.addEventListener("change", () => {
      const warn = statusSelect.value === "available" && pet.status !== "available" && pet.stock === 0;
      put(choice, ...(warn ? [`With stock 0, ${pet.name} cannot be ordered even when available. `, ctx.may("setInventory") && restockInstead] : []));
    });

    statusForm.addEventListener("submit", (event) => {
      event.preventDefault();
      const to = statusSelect.value as Status;
      if (to === pet.status) return;
      void ctx.run(setStatus, async () => {
        try {
          this.pet = await ctx.client.pets.update(pet.id, { status: to });
          ctx.done(
            cannotBeOrdered(this.pet)
              ? `${this.pet.name} is now ${this.pet.status}, but with stock 0 it cannot be ordered until it is restocked.`
              : `${this.pet.name} is now ${this.pet.status}.`,
          );
        } catch (error) {
          // Refused: the pet may have changed since the page showed it (an order, another
          // person). The refusal is shown, and the row shows what the service holds now.
          ctx.fail(error);
          await this.refresh().catch(() => {});
        }
        this.render();
        this.element.querySelector<HTMLSelectElement>("select")?.focus();
      });
    });

    const edit = h("button", { type: "button", class: "secondary", "aria-expanded": "false", onclick: () => this.toggleEditor() }, "Edit", h("span", { class: "visually-hidden" }, ` ${pet.name}`));
    const remove = h("button", { type: "button", class: "danger" }, "Remove", h("span", { class: "visually-hidden" }, ` ${pet.name}`));
    remove.addEventListener("click", () => {
      void confirmAction(`Remove ${pet.name}?`, "The pet and its stock are deleted. A pet with open orders cannot be removed.", "Remove pet").then((yes) => {
        if (!yes) return;
        void ctx.run(remove, async () => {
          await ctx.client.pets.delete(pet.id);
          this.onRemoved();
          ctx.done(`${pet.name} was removed.`);
        });
      });
    });

    put(
      this.element,
      h(
        "td",
        { "data-label": "Pet" },
        h("span", { class: "thumb-slot" }, rowThumbnail(ctx, pet)),
        h("span", { class: "name" }, pet.name),
        " ",
        h("span", { class: "id" }, `#${pet.id}`),
        " ",
        h("span", { class: "badge", hidden: true }),
        descriptionText(pet.description),
      ),
      h("td", { "data-label": "Category" }, category?.name ?? `#${pet.categoryId}`),
      h("td", { "data-label": "Tags" }, tagChips(pet.tags)),
      h("td", { "data-label": "Price", class: "money" }, pet.price === undefined ? h("span", { class: "no-price" }, "No price", h("span", { class: "visually-hidden" }, ": cannot be ordered")) : priceText(pet)),
      h("td", { "data-label": "Status" }, ctx.may("updatePet") ? statusForm : h("span", { class: "pet-status" }, pet.status), unorderable, choice),
      h("td", { "data-label": "Stock" }, ctx.may("setInventory") ? stockForm : h("span", { class: "stock" }, pet.stock)),
      h("td", { class: "row-actions" }, ctx.may("updatePet") ? edit : null, ctx.may("deletePet") ? remove : null),
    );
    this.highlight();
  }

  /**
   * Shows the pet's photos as changed in its edit row: the row's thumbnail follows, and
   * nothing else is drawn again (the row's controls stay under the reader's hand).
   */
  private showPhotos(photos: Pet["photos"]): void {
    this.pet = { ...this.pet, photos };
    const slot = this.element.querySelector(".thumb-slot");
    if (slot) put(slot, rowThumbnail(this.ctx, this.pet));
  }

  private toggleEditor(): void {
    const opening = this.editor.hidden;
    const button = this.element.querySelector<HTMLButtonElement>("button[aria-expanded]");
    button?.setAttribute("aria-expanded", String(opening));
    this.editor.hidden = !opening;
    if (!opening) {
      this.editor.replaceChildren();
      button?.focus();
      return;
    }
    const { pet, ctx } = this;
    const name = h("input", { type: "text", name: "name", required: true, ...textBounds(ctx.rules.field("PetPatch", "name")), value: pet.name });
    const category = h("select", { name: "categoryId", required: true }, ...categoryOptions(this.categories, pet.categoryId));
    const currency = pet.currency ?? shopCurrency();
    const price = priceInput(moneyInput(pet.price, currency));
    const description = descriptionField(ctx.rules, "PetPatch", pet.description);
    const tags = tagsField(ctx.rules, "PetPatch", pet.tags);
    // What the fields showed: a field left as it was sends nothing (a description's line
    // breaks read back as LF; a tag holding a comma, set through the API, stays whole).
    const shown = { description: description.textarea.value, tags: tags.input.value };
    // The fields by the names a refusal's details give them.
    const fields = { name, categoryId: category, price, description: description.textarea, tags: tags.input };
    const save = h("button", { type: "submit" }, "Save changes");
    const form = h(
      "form",
      { class: "edit", "aria-label": `Edit ${pet.name}` },
      field("Name", name),
      field("Category", category),
      field(priceLabel(currency), price, "Empty: no price, so it cannot be ordered."),
      description.label,
      tags.label,
      h("div", { class: "actions" }, save, h("button", { type: "button", class: "secondary", onclick: () => this.toggleEditor() }, "Cancel")),
    );
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      void ctx.run(save, async () => {
        const amount = readPrice(price, currency);
        // null takes a price away; a pet without one and an empty field send nothing.
        const priceChange = amount === (pet.price ?? null) ? {} : { price: amount };
        // Likewise the description and the tags: only when they changed; empty removes them.
        const text = description.textarea.value;
        const descriptionChange = text === shown.description ? {} : { description: text === "" ? null : text };
        const list = parseTags(tags.input.value);
        const tagsChange = tags.input.value === shown.tags || sameTags(list, pet.tags) ? {} : { tags: list };
        try {
          this.pet = await ctx.client.pets.update(pet.id, { name: name.value, categoryId: Number(category.value), ...priceChange, ...descriptionChange, ...tagsChange });
        } catch (error) {
          flagRefusedFields(error, fields);
          throw error;
        }
        noteCurrency(this.pet.currency);
        this.toggleEditor();
        this.render();
        ctx.done(`Saved ${this.pet.name}.`);
      });
    });
    const photos = photosPanel(ctx, pet, (list) => this.showPhotos(list));
    put(this.editor, h("td", { colspan: 7 }, form, photos));
    name.focus();
  }
}

/** "Add a pet": name, category, status, price, description, tags and a first stock count. */
function addPetForm(ctx: Console, added: (pet: Pet, categories: Map<number, Category>) => void): HTMLElement {
  const name = h("input", { type: "text", name: "name", required: true, ...textBounds(ctx.rules.field("NewPet", "name")), autocomplete: "off" });
  const category = h("select", { name: "categoryId", required: true });
  const status = h("select", { name: "status" }, ...ctx.rules.petStatuses.map((s) => h("option", { value: s }, s)));
  const stock = h("input", { type: "number", name: "quantity", ...numberBounds(ctx.rules.field("InventoryUpdate", "quantity")), step: 1, value: 0, inputmode: "numeric" });
  const price = priceInput("");
  const priceField = field(priceLabel(shopCurrency()), price, "Empty: no price, so it cannot be ordered.");
  const description = descriptionField(ctx.rules, "NewPet", undefined);
  const tags = tagsField(ctx.rules, "NewPet", []);
  // The fields by the names a refusal's details give them.
  const fields = { name, categoryId: category, price, description: description.textarea, tags: tags.input };
  const submit = h("button", { type: "submit" }, "Add pet");
  // A first stock count is a call of its own (setInventory): offered when the key may make it.
  const restocks = ctx.may("setInventory");
  const form = h(
    "form",
    { class: "add" },
    field("Name", name),
    field("Category", category),
    field("Status", status),
    priceField,
    restocks ? field("Stock", stock) : null,
    description.label,
    tags.label,
    submit,
  );
  const details = h("details", { class: "add" }, h("summary", {}, "Add a pet"), form);
  details.addEventListener("toggle", () => {
    if (!details.open) return;
    put(priceField.querySelector(".label") ?? priceField, priceLabel(shopCurrency()));
    void ctx.categories().then((all) => put(category, ...categoryOptions(all, Number(category.value) || undefined)), (e: unknown) => ctx.fail(e));
  });
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    void ctx.run(submit, async () => {
      const amount = readPrice(price, shopCurrency());
      const text = description.textarea.value;
      const list = parseTags(tags.input.value);
      let pet: Pet;
      try {
        pet = await ctx.client.pets.create({
          name: name.value,
          categoryId: Number(category.value),
          status: status.value as Status,
          ...(amount === null ? {} : { price: amount }),
          ...(text === "" ? {} : { description: text }),
          ...(list.length === 0 ? {} : { tags: list }),
        });
      } catch (error) {
        flagRefusedFields(error, fields);
        throw error;
      }
      noteCurrency(pet.currency);
      const quantity = restocks ? Number(stock.value) : 0;
      form.reset();
      description.recount();
      flagRefusedFields(undefined, fields);
      try {
        // A new pet's stock is 0; a count above it is a restock (rule 6 may change the status).
        if (quantity > 0) {
          const item = await ctx.client.inventory.set(pet.id, { quantity });
          pet = { ...pet, status: item.status, stock: item.quantity };
        }
        ctx.done(`Added ${pet.name} (#${pet.id}) with stock ${pet.stock}.`);
      } finally {
        added(pet, await ctx.categories());
        name.focus();
      }
    });
  });
  return details;
}

/** A pet's price as money, or that it has none (and so cannot be ordered). */
function priceText(pet: Pet): string {
  return pet.price === undefined ? "No price" : formatMoney(pet.price, pet.currency ?? shopCurrency() ?? "EUR");
}

function priceLabel(currency: string | undefined): string {
  return currency ? `Price (${currency})` : "Price";
}

/** A price field: major units, typed (a number field would refuse "19,99"). */
function priceInput(value: string): HTMLInputElement {
  return h("input", { type: "text", name: "price", inputmode: "decimal", autocomplete: "off", maxlength: 20, value, class: "money-input" });
}

/**
 * The price in a field, in minor units (null when empty). When it is not an amount, the
 * field is marked invalid and focused, and the error (what to type) is thrown for the
 * page's alert.
 */
function readPrice(input: HTMLInputElement, currency: string | undefined): number | null {
  try {
    const amount = parseMoney(input.value, currency);
    input.removeAttribute("aria-invalid");
    return amount;
  } catch (error) {
    input.setAttribute("aria-invalid", "true");
    input.focus();
    throw error;
  }
}

/** Whether a pet is `available` but cannot be ordered: it has no stock. */
export function cannotBeOrdered(pet: Pet): boolean {
  return pet.status === "available" && pet.stock === 0;
}
