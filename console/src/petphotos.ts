// A pet's photos on the Stock screen: the thumbnails in its edit row, added from files,
// put in order and removed; and the first one beside its name in the list.
//
// Each change is a call of its own, made at once (not on "Save changes"): the service
// keeps the order and refuses what it does not take (a type it cannot read: 415; a ninth
// photo: 409), and its message is shown. Order changes by buttons, not by dragging, so a
// keyboard moves a photo as well as a pointer.

import type { Pet, Photo } from "@acme-pets/petstore";
import type { Console } from "./context.js";
import { confirmAction, h, put } from "./dom.js";

/** What the file input offers: the types the service takes. */
const accepted = "image/jpeg,image/png,image/webp";

/**
 * The first photo of a pet, small, for its row; null when it has none. Its alt is empty:
 * the pet's name beside it says what it shows, and a screen reader need not hear it twice.
 */
export function rowThumbnail(ctx: Console, pet: Pet): HTMLImageElement | null {
  const first = pet.photos[0];
  if (first === undefined) return null;
  return h("img", { class: "row-thumb", src: ctx.client.photoUrl(first, "thumb"), alt: "", width: 40, height: 40, loading: "lazy", decoding: "async" });
}

/** A photo's button, found again after the list is drawn anew. */
interface FocusTarget {
  photoId: string;
  action: "earlier" | "later" | "remove";
}

/**
 * The photos of a pet, as a group in its edit row: each thumbnail with buttons to move
 * it earlier or later and to remove it, and a file input that adds photos (several are
 * sent one after another). `changed` is told the photos after each change, for the row.
 */
export function photosPanel(ctx: Console, pet: Pet, changed: (photos: Photo[]) => void): HTMLFieldSetElement {
  let photos = [...pet.photos];
  const max = ctx.rules.field("Pet", "photos").maxItems;
  const list = h("ol", { class: "photos" });
  const none = h("p", { class: "muted" }, `${pet.name} has no photos yet.`);
  const progress = h("p", { class: "photo-progress", role: "status" });
  const may = { upload: ctx.may("uploadPetPhoto"), reorder: ctx.may("reorderPetPhotos"), remove: ctx.may("deletePetPhoto") };
  const input = h("input", { type: "file", name: "photo", accept: accepted, multiple: true });
  const limit = max === undefined ? "" : ` Up to ${max} photos;`;
  const hint = `JPEG, PNG or WebP, up to 10 MiB each.${limit} the first is the one the shop shows in lists. Changes are saved at once.`;
  const group = h(
    "fieldset",
    { class: "photos" },
    h("legend", {}, `Photos of ${pet.name}`),
    none,
    list,
    may.upload ? h("label", { class: "field" }, h("span", { class: "label" }, "Add photos"), input, h("span", { class: "hint" }, hint)) : null,
    progress,
  );

  /** Draws the list again from `photos`, tells the row, and focuses `focus`'s button (or its neighbour's). */
  const draw = (focus?: FocusTarget) => {
    none.hidden = photos.length > 0;
    list.hidden = photos.length === 0;
    put(list, ...photos.map((photo, i) => item(photo, i)));
    changed(photos);
    if (focus === undefined) return;
    const buttons = (id: string) => [...list.querySelectorAll<HTMLButtonElement>(`li[data-photo-id="${CSS.escape(id)}"] button`)];
    const same = buttons(focus.photoId);
    (same.find((b) => b.dataset.action === focus.action && !b.disabled) ?? same.find((b) => !b.disabled) ?? input)?.focus();
  };

  /** Disables the group while a call runs: one change at a time, each from the order the page shows. */
  const busy = async (work: () => Promise<void>) => {
    group.disabled = true;
    list.setAttribute("aria-busy", "true");
    put(progress, "");
    try {
      await work();
    } finally {
      group.disabled = false;
      list.removeAttribute("aria-busy");
    }
  };

  const move = (from: number, to: number, button: HTMLButtonElement) => {
    const order = photos.map((p) => p.id);
    const [id] = order.splice(from, 1);
    if (id === undefined) return;
    order.splice(to, 0, id);
    void ctx.run(button, () =>
      busy(async () => {
        // The whole list, in its new order: the service refuses one that is not the pet's.
        const updated = await ctx.client.pets.reorderPhotos(pet.id, order);
        photos = [...updated.photos];
      }).then(() => {
        draw({ photoId: id, action: button.dataset.action as FocusTarget["action"] });
        ctx.done(`Moved photo ${from + 1} of ${pet.name} to place ${to + 1}.`);
      }),
    );
  };

  const remove = (photo: Photo, index: number, button: HTMLButtonElement) => {
    void confirmAction(`Remove photo ${index + 1} of ${pet.name}?`, "The photo is deleted; its links stop working soon after.", "Remove photo").then((yes) => {
      if (!yes) return;
      void ctx.run(button, () =>
        busy(() => ctx.client.pets.deletePhoto(pet.id, photo.id)).then(() => {
          photos = photos.filter((p) => p.id !== photo.id);
          // Focus goes to the photo that took its place, else the one before, else the input.
          const next = photos[index] ?? photos[index - 1];
          draw(next === undefined ? undefined : { photoId: next.id, action: "remove" });
          if (next === undefined) input.focus();
          ctx.done(`Removed photo ${index + 1} of ${pet.name}.`);
        }),
      );
    });
  };

  const item = (photo: Photo, i: number): HTMLLIElement => {
    const which = h("span", { class: "visually-hidden" }, `: photo ${i + 1}`);
    // Short words, to sit side by side under a thumbnail; the arrows are for the eye.
    const arrow = (text: string) => h("span", { "aria-hidden": "true" }, text);
    const button = (action: FocusTarget["action"], disabled: boolean, cls: string, ...text: (Node | string)[]) =>
      h("button", { type: "button", class: cls, "data-action": action, disabled }, ...text, which.cloneNode(true));
    const earlier = button("earlier", i === 0, "secondary", arrow("← "), "Earlier");
    const later = button("later", i === photos.length - 1, "secondary", "Later", arrow(" →"));
    const del = button("remove", false, "danger", "Remove");
    earlier.addEventListener("click", () => move(i, i - 1, earlier));
    later.addEventListener("click", () => move(i, i + 1, later));
    del.addEventListener("click", () => remove(photo, i, del));
    return h(
      "li",
      { "data-photo-id": photo.id },
      h("img", { src: ctx.client.photoUrl(photo, "thumb"), alt: `Photo ${i + 1} of ${pet.name}`, width: photo.width, height: photo.height, decoding: "async" }),
      h("div", { class: "actions" }, may.reorder && photos.length > 1 ? earlier : null, may.reorder && photos.length > 1 ? later : null, may.remove ? del : null),
    );
  };

  input.addEventListener("change", () => {
    const files = [...(input.files ?? [])];
    if (files.length === 0) return;
    void ctx.run(null, async () => {
      let added = 0;
      try {
        await busy(async () => {
          // One after another: the service puts each last, so they keep the order chosen.
          for (const file of files) {
            put(progress, files.length === 1 ? `Uploading ${file.name}…` : `Uploading ${file.name} (${added + 1} of ${files.length})…`);
            const photo = await ctx.client.pets.uploadPhoto(pet.id, file);
            photos = [...photos, photo];
            added++;
            draw();
          }
        });
      } catch (error) {
        // The page's alert says the service's reason; this says which file and what was kept.
        const failed = files[added]?.name ?? "";
        put(progress, files.length === 1 ? `${failed} was not added.` : `${failed} was not added; ${added} of ${files.length} were.`);
        throw error;
      } finally {
        input.value = "";
        input.focus();
      }
      put(progress, "");
      ctx.done(added === 1 ? `Added a photo of ${pet.name}.` : `Added ${added} photos of ${pet.name}.`);
    });
  });

  draw();
  return group;
}
