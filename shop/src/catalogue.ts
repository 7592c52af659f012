// The pets for sale (`GET /pets?status=available`) as cards, a page at a time, found by
// name, category and tags (all of them: `tag=a&tag=b`) as the API filters.

import type { ListPetsQuery, PageIterator, Pet } from "@acme-pets/petstore";
import { field, h, put } from "../../console/src/dom.js";
import { petCard } from "./card.js";
import type { Shop } from "./context.js";

/** Waits this long after the last key typed in the name before searching. */
const typingPause = 300;

interface Filters {
  name: HTMLInputElement;
  category: HTMLSelectElement;
  tags: HTMLInputElement;
}

/** The list's query from the filters: an empty one is left out (the API refuses an empty name). */
function query(filters: Filters): ListPetsQuery {
  const q: ListPetsQuery = { status: "available" };
  const name = filters.name.value.trim();
  if (name !== "") q.name = name;
  if (filters.category.value !== "") q.categoryId = Number(filters.category.value);
  const tags = filters.tags.value.split(",").map((t) => t.trim()).filter((t) => t !== "");
  if (tags.length > 0) q.tag = tags;
  return q;
}

export function catalogueView(shop: Shop): HTMLElement {
  const filters: Filters = {
    name: h("input", { type: "search", name: "name", autocomplete: "off", maxlength: 100 }),
    category: h("select", { name: "categoryId" }, h("option", { value: "" }, "All categories")),
    tags: h("input", { type: "text", name: "tags", autocomplete: "off", spellcheck: "false", "aria-describedby": "tags-hint" }),
  };
  const form = h(
    "form",
    { class: "filters card", role: "search", "aria-label": "Find a pet" },
    field("Name", filters.name),
    field("Category", filters.category),
    h("label", { class: "field" }, h("span", { class: "label" }, "Tags"), filters.tags, h("span", { class: "hint", id: "tags-hint" }, "Separate tags with commas: pets with all of them.")),
    h("div", { class: "actions" }, h("button", { type: "submit" }, "Search"), h("button", { type: "reset", class: "secondary" }, "Clear")),
  );
  const list = h("ul", { class: "cards", "aria-label": "Pets for sale" });
  const count = h("p", { class: "count", role: "status", tabindex: "-1" });
  const more = h("button", { type: "button", class: "secondary", hidden: true }, "Show more pets");
  const categories = loadCategories(shop, filters.category);
  const pager = new PetPages(shop, list, count, more, (pet) => categories.then((names) => petCard(pet, { shop, category: names.get(pet.categoryId), onTag })));

  function onTag(tag: string): void {
    filters.tags.value = tag;
    void pager.reload(query(filters)).then(() => count.focus());
  }
  let typing: ReturnType<typeof setTimeout> | undefined;
  filters.name.addEventListener("input", () => {
    clearTimeout(typing);
    typing = setTimeout(() => void pager.reload(query(filters)), typingPause);
  });
  filters.category.addEventListener("change", () => void pager.reload(query(filters)));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    clearTimeout(typing);
    void pager.reload(query(filters));
  });
  // After the reset has emptied the fields.
  form.addEventListener("reset", () => setTimeout(() => void pager.reload(query(filters))));
  void pager.reload(query(filters));
  return h("div", { class: "catalogue" }, h("h1", {}, "Pets for sale"), form, count, list, h("div", { class: "pager" }, more));
}

/** Every category by id (for the cards), and as the filter's options. */
async function loadCategories(shop: Shop, select: HTMLSelectElement): Promise<Map<number, string>> {
  const names = new Map<number, string>();
  try {
    for await (const category of shop.client.categories.list({ limit: 100 })) {
      names.set(category.id, category.name);
      select.append(h("option", { value: category.id }, category.name));
    }
  } catch (error) {
    shop.fail(error); // the cards go without their category's name
  }
  return names;
}

/** The cards of one query, a page at a time ("Show more pets" follows the `next` link). */
class PetPages {
  private pages: PageIterator<Pet> | undefined;
  private generation = 0; // a reload while a page is on its way makes that page stale
  private shown = 0;

  constructor(
    private readonly shop: Shop,
    private readonly list: HTMLElement,
    private readonly count: HTMLElement,
    private readonly more: HTMLButtonElement,
    private readonly card: (pet: Pet) => Promise<HTMLLIElement>,
  ) {
    more.addEventListener("click", () => void this.next());
  }

  async reload(q: ListPetsQuery): Promise<void> {
    this.generation++;
    void this.pages?.return(undefined).catch(() => {});
    this.pages = this.shop.client.pets.pages(q);
    this.shown = 0;
    put(this.list);
    await this.next();
  }

  private async next(): Promise<void> {
    const generation = this.generation;
    const pages = this.pages;
    if (pages === undefined) return;
    const hadFocus = document.activeElement === this.more;
    this.more.disabled = true;
    put(this.count, "Loading…");
    try {
      const step = await pages.next();
      const page = step.done ? { items: [], hasNext: false } : step.value;
      const cards = await Promise.all(page.items.map(this.card));
      if (generation !== this.generation) return;
      this.list.append(...cards);
      this.shown += cards.length;
      this.more.hidden = !page.hasNext;
      put(this.count, this.shown === 0 ? "No pet for sale matches." : `${this.shown} ${this.shown === 1 ? "pet" : "pets"}${page.hasNext ? ", more to show" : ""}.`);
      // "Show more pets" pressed: focus stays on it, or goes to the count once it is gone.
      if (hadFocus) (this.more.hidden ? this.count : this.more).focus();
    } catch (error) {
      if (generation !== this.generation) return;
      put(this.count, "");
      this.shop.fail(error);
    } finally {
      if (generation === this.generation) this.more.disabled = false;
    }
  }
}
