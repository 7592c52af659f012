import type { Category } from "@acme-pets/petstore";
import { Pages, type Console } from "./context.js";
import { confirmAction, field, h, put, removeRows } from "./dom.js";
import { textBounds } from "./rules.js";

/**
 * Categories: add, rename or describe, remove (the service refuses one that pets use);
 * each offered only when the console's key may make its call.
 */
export function categoriesView(ctx: Console): HTMLElement {
  const rows = h("tbody");
  const pages = new Pages<Category>(
    ctx,
    ["category", "categories"],
    (category) => category.id,
    () => ctx.client.categories.pages({ limit: 25 }),
    () => rows.replaceChildren(),
    (categories) => {
      for (const category of categories) rows.append(categoryRow(ctx, category, () => pages.removed(category)));
    },
  );
  void pages.reload();

  const name = h("input", { type: "text", name: "name", required: true, ...textBounds(ctx.rules.field("NewCategory", "name")), autocomplete: "off" });
  const description = h("input", { type: "text", name: "description", ...textBounds(ctx.rules.field("NewCategory", "description")), autocomplete: "off" });
  const submit = h("button", { type: "submit" }, "Add category");
  const form = h("form", { class: "add" }, field("Name", name), field("Description", description, "Optional"), submit);
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    void ctx.run(submit, async () => {
      const category = await ctx.client.categories.create({ name: name.value, ...(description.value ? { description: description.value } : {}) });
      ctx.categoriesChanged();
      rows.prepend(categoryRow(ctx, category, () => pages.removed(category)));
      pages.added(category);
      form.reset();
      ctx.done(`Added the category ${category.name}.`);
      name.focus();
    });
  });

  return h(
    "section",
    { "aria-labelledby": "categories-title" },
    h("h1", { id: "categories-title" }, "Categories"),
    ctx.may("createCategory") && h("details", { class: "add" }, h("summary", {}, "Add a category"), form),
    h(
      "div",
      { class: "table-wrap" },
      h(
        "table",
        { class: "categories" },
        h("caption", { class: "visually-hidden" }, "Categories, by id"),
        h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "Name"), h("th", { scope: "col" }, "Description"), h("th", { scope: "col" }, h("span", { class: "visually-hidden" }, "Actions")))),
        rows,
      ),
    ),
    pages.footer,
  );
}

function categoryRow(ctx: Console, initial: Category, removed: () => void): HTMLTableRowElement {
  let category = initial;
  const row = h("tr", { "data-category-id": category.id });

  function show(): void {
    const edit = h("button", { type: "button", class: "secondary", onclick: editing }, "Edit", h("span", { class: "visually-hidden" }, ` ${category.name}`));
    const remove = h("button", { type: "button", class: "danger" }, "Remove", h("span", { class: "visually-hidden" }, ` ${category.name}`));
    remove.addEventListener("click", () => {
      void confirmAction(`Remove the category ${category.name}?`, "A category that pets still belong to cannot be removed.", "Remove category").then((yes) => {
        if (!yes) return;
        void ctx.run(remove, async () => {
          await ctx.client.categories.delete(category.id);
          ctx.categoriesChanged();
          removeRows(row);
          removed();
          ctx.done(`The category ${category.name} was removed.`);
        });
      });
    });
    put(
      row,
      h("td", { "data-label": "Name" }, h("span", { class: "name" }, category.name), " ", h("span", { class: "id" }, `#${category.id}`)),
      h("td", { "data-label": "Description" }, category.description ?? ""),
      h("td", { class: "row-actions" }, ctx.may("replaceCategory") ? edit : null, ctx.may("deleteCategory") ? remove : null),
    );
  }

  function editing(): void {
    // PUT replaces the category: the new one's bounds.
    const name = h("input", { type: "text", name: "name", required: true, ...textBounds(ctx.rules.field("NewCategory", "name")), value: category.name });
    const description = h("input", { type: "text", name: "description", ...textBounds(ctx.rules.field("NewCategory", "description")), value: category.description ?? "" });
    const save = h("button", { type: "submit" }, "Save changes");
    const cancel = h("button", { type: "button", class: "secondary", onclick: () => (show(), row.querySelector("button")?.focus()) }, "Cancel");
    const form = h("form", { class: "edit", "aria-label": `Edit ${category.name}` }, field("Name", name), field("Description", description), h("div", { class: "actions" }, save, cancel));
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      void ctx.run(save, async () => {
        // PUT replaces the category: a description left empty is removed.
        category = await ctx.client.categories.replace(category.id, { name: name.value, ...(description.value ? { description: description.value } : {}) });
        ctx.categoriesChanged();
        show();
        row.querySelector("button")?.focus();
        ctx.done(`Saved the category ${category.name}.`);
      });
    });
    put(row, h("td", { colspan: 3 }, form));
    name.focus();
  }

  show();
  return row;
}
