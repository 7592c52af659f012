// A pet for sale as a card: its first photo (lazy, the thumb or the display size as the
// layout needs), name, category, description, tags, price and stock, and a form to
// order it. After an order, or a refusal, the card reads the pet again: the stock shown
// is the service's.

import { PetstoreError, type Order, type Pet, type Photo } from "@acme-pets/petstore";
import { describe } from "../../console/src/context.js";
import { field, h, put } from "../../console/src/dom.js";
import { formatMoney, noteCurrency } from "../../console/src/money.js";
import type { Shop } from "./context.js";

/** What a card needs beyond its pet: the shop, its category's name, and what a tag does when chosen. */
export interface CardContext {
  shop: Shop;
  category: string | undefined;
  onTag(tag: string): void;
}

/** The largest number of units one order may hold (NewOrder.quantity: 1–100). */
const maxQuantity = 100;

/** How wide the photo is drawn: one column on a phone, two, then a grid of cards of about 18rem. */
const photoSizes = "(min-width: 60rem) 18rem, (min-width: 40rem) 45vw, 100vw";

export function petCard(pet: Pet, ctx: CardContext): HTMLLIElement {
  noteCurrency(pet.currency);
  const heading = `pet-${pet.id}-name`;
  const buy = h("div", { class: "buy" });
  const card = h(
    "li",
    { class: "card pet", "data-pet-id": pet.id, "aria-labelledby": heading },
    photo(pet, ctx.shop),
    h("h2", { id: heading }, pet.name),
    ctx.category ? h("p", { class: "category" }, ctx.category) : null,
    pet.description ? h("p", { class: "description" }, pet.description) : null,
    pet.tags.length > 0 ? tagList(pet.tags, ctx.onTag) : null,
    buy,
  );
  fillBuy(buy, pet, ctx.shop);
  return card;
}

/** The pet's first photo, or a plain box saying it has none. */
function photo(pet: Pet, shop: Shop): HTMLElement {
  const first: Photo | undefined = pet.photos[0];
  if (first === undefined) return h("div", { class: "photo none" }, "No photo yet");
  const [thumbWidth, thumbHeight] = scaled(first, 400);
  const [displayWidth] = scaled(first, 1200);
  const thumb = shop.client.photoUrl(first, "thumb");
  // The sizes' real widths: a portrait thumb is narrower than 400 px, and a small
  // original makes the display size no larger than the thumb.
  const srcset = displayWidth > thumbWidth ? `${thumb} ${thumbWidth}w, ${shop.client.photoUrl(first, "display")} ${displayWidth}w` : `${thumb} ${thumbWidth}w`;
  return h("img", { class: "photo", src: thumb, srcset, sizes: photoSizes, alt: pet.name, loading: "lazy", decoding: "async", width: thumbWidth, height: thumbHeight });
}

/** The width and height of a photo's size whose longest side is at most `longest` pixels. */
function scaled(photo: Photo, longest: number): [number, number] {
  const ratio = Math.min(1, longest / Math.max(photo.width, photo.height, 1));
  return [Math.max(1, Math.round(photo.width * ratio)), Math.max(1, Math.round(photo.height * ratio))];
}

function tagList(tags: string[], onTag: (tag: string) => void): HTMLElement {
  return h(
    "ul",
    { class: "tags", "aria-label": "Tags" },
    ...tags.map((tag) => h("li", {}, h("button", { type: "button", class: "tag", onclick: () => onTag(tag) }, h("span", { class: "visually-hidden" }, "Show the pets tagged "), tag))),
  );
}

/** The price, the stock and the order form, drawn again whenever the pet is read again. */
function fillBuy(buy: HTMLElement, pet: Pet, shop: Shop): void {
  const price = pet.price !== undefined && pet.currency ? formatMoney(pet.price, pet.currency) : undefined;
  const stock = h("p", { class: `stock${pet.stock === 0 ? " sold-out" : ""}`, tabindex: "-1" }, stockText(pet));
  const error = h("p", { class: "error", role: "alert" });
  const forSale = pet.status === "available" && price !== undefined && pet.stock > 0;
  put(buy, h("p", { class: "price" }, price ?? "No price yet: not for sale"), stock, forSale ? orderForm(buy, pet, shop, error) : null, error);
}

function stockText(pet: Pet): string {
  if (pet.stock === 0) return "Sold out";
  if (pet.status !== "available") return "Not for sale just now";
  return pet.stock === 1 ? "1 in stock: the last one" : `${pet.stock} in stock`;
}

function orderForm(buy: HTMLElement, pet: Pet, shop: Shop, error: HTMLElement): HTMLFormElement {
  const max = Math.min(pet.stock, maxQuantity);
  const quantity = h("input", { type: "number", name: "quantity", min: 1, max, step: 1, value: 1, required: true, inputmode: "numeric" });
  const total = h("output", { class: "total" });
  const showTotal = () => {
    const n = Number(quantity.value);
    put(total, pet.price !== undefined && pet.currency && Number.isInteger(n) && n > 0 ? `Total ${formatMoney(pet.price * n, pet.currency)}` : "");
  };
  quantity.addEventListener("input", showTotal);
  showTotal();
  const submit = h("button", { type: "submit" }, "Order");
  const form = h("form", { class: "order-form", "aria-label": `Order ${pet.name}` }, field("Quantity", quantity, `1 to ${max}`), total, submit);
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    void place(buy, pet, shop, Number(quantity.value), submit, error);
  });
  return form;
}

/** Places the order; says so (or shows the service's refusal in the card), then reads the pet again. */
async function place(buy: HTMLElement, pet: Pet, shop: Shop, quantity: number, submit: HTMLButtonElement, error: HTMLElement): Promise<void> {
  shop.clear();
  put(error, "");
  submit.disabled = true;
  let order: Order | undefined;
  let refusal: unknown;
  try {
    order = await shop.client.orders.place({ petId: pet.id, quantity });
  } catch (problem) {
    refusal = problem;
  }
  if (refusal instanceof PetstoreError && refusal.status === 401) {
    shop.fail(refusal);
    return;
  }
  const hadFocus = buy.contains(document.activeElement) || document.activeElement === document.body;
  const fresh = await readPet(shop, pet.id).catch(() => undefined);
  if (!buy.isConnected) return;
  if (fresh !== undefined) fillBuy(buy, fresh, shop);
  submit.disabled = false;
  const message = buy.querySelector<HTMLElement>("p.error") ?? error;
  if (order !== undefined) {
    const total = order.total !== undefined && order.currency ? `, ${formatMoney(order.total, order.currency)}` : "";
    shop.done(`Order #${order.id} placed: ${order.quantity} × ${order.petName ?? pet.name}${total}. `, h("a", { href: "#orders" }, "See my orders"));
  } else {
    put(message, describe(refusal));
  }
  if (hadFocus) (buy.querySelector<HTMLElement>("form.order-form button") ?? buy.querySelector<HTMLElement>("p.stock"))?.focus();
}

async function readPet(shop: Shop, id: number): Promise<Pet | undefined> {
  for await (const pet of shop.client.pets.list({ ids: [id] })) return pet;
  return undefined;
}
