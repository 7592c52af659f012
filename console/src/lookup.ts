import type { Pet } from "@acme-pets/petstore";
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

/** The pets with these ids (each with its `stock`: no inventory lookup is needed beside it). */
export function petsById(ctx: Console, ids: Iterable<number>): Promise<Map<number, Pet>> {
  return byId(ids, (ids) => ctx.client.pets.list({ ids }), (pet) => pet.id);
}

/**
 * Who placed an order, as far as the API lets an admin know. An order carries only its
 * `accountId`, and the API has no call that reads another account (only
 * `GET /accounts/me`), so the email is shown for the signed-in account alone; any other
 * account is named by its id.
 */
export function accountLabel(ctx: Console, accountId: number): string {
  return accountId === ctx.account.id ? `${ctx.account.email} (account ${accountId}, you)` : `account ${accountId}`;
}
