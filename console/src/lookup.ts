import type { InventoryItem, Pet } from "@acme-pets/petstore";
import type { Console } from "./context.js";

/**
 * The items of a batch lookup by id (`ids`, one call for up to 100 ids), by id; ids that
 * match nothing are left out, and no ids make no call.
 */
async function byId<T>(ids: Iterable<number>, list: (ids: number[]) => AsyncIterable<T>, id: (item: T) => number): Promise<Map<number, T>> {
  const found = new Map<number, T>();
  const unique = [...new Set(ids)];
  if (unique.length === 0) return found;
  for await (const item of list(unique)) found.set(id(item), item);
  return found;
}

/** The pets with these ids. */
export function petsById(ctx: Console, ids: Iterable<number>): Promise<Map<number, Pet>> {
  return byId(ids, (ids) => ctx.client.pets.list({ ids }), (pet) => pet.id);
}

/** The stock of the pets with these ids, by pet id. */
export function stockById(ctx: Console, ids: Iterable<number>): Promise<Map<number, InventoryItem>> {
  return byId(ids, (ids) => ctx.client.inventory.list({ ids }), (item) => item.petId);
}
