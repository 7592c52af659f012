import type { Account, Pet, Petstore } from "@acme-pets/petstore";
import { describe, type Console } from "./context.js";

/**
 * The items of a batch lookup by id (`ids`, one call for as many ids as the parameter's
 * `maxItems`: the document's), by id; ids that match nothing are left out, and no ids
 * make no call.
 */
async function byId<T>(ids: Iterable<number>, maxIds: number | undefined, list: (ids: number[]) => AsyncIterable<T>, id: (item: T) => number): Promise<Map<number, T>> {
  const found = new Map<number, T>();
  const unique = [...new Set(ids)];
  const size = maxIds ?? unique.length;
  for (let start = 0; start < unique.length; start += size) {
    for await (const item of list(unique.slice(start, start + size))) found.set(id(item), item);
  }
  return found;
}

/** The pets with these ids (each with its `stock`: no inventory lookup is needed beside it). */
export function petsById(ctx: Console, ids: Iterable<number>): Promise<Map<number, Pet>> {
  return byId(ids, ctx.rules.parameter("listPets", "ids").maxItems, (ids) => ctx.client.pets.list({ ids }), (pet) => pet.id);
}

/**
 * Who placed an order: an order carries only its `accountId`, and `GET /accounts` (admins,
 * `accounts:read`) tells staff the email behind it. Kept for the console's session (an
 * account's email does not change under it), so a page of orders asks only for the
 * accounts not seen yet, in one call. A key without `accounts:read` is asked once: from
 * then on orders name accounts by id (the console's own account by its email, which the
 * sign-in read).
 */
export class AccountNames {
  private readonly emails = new Map<number, string>();
  private readonly asked = new Set<number>(); // found or not: an id that matched nothing stays unnamed
  private refused: string | undefined; // why emails are not shown, once the lookup was refused

  constructor(
    private readonly client: Petstore,
    private readonly self: Account,
    private readonly lacks: (error: unknown) => string | undefined,
    /** The most ids a lookup takes (the document's `maxItems` of `ids`). */
    private readonly maxIds: number | undefined,
  ) {
    this.emails.set(self.id, self.email);
    this.asked.add(self.id);
  }

  /**
   * Looks up the accounts of `ids` not known yet, with one call (a page of orders has far
   * fewer ids than a call takes). It never throws: an order is still worth showing
   * without its customer's email. It answers why emails are not shown, or undefined.
   */
  async load(ids: Iterable<number>): Promise<string | undefined> {
    const unknown = [...new Set(ids)].filter((id) => !this.asked.has(id));
    if (unknown.length === 0 || this.refused !== undefined) return this.refused;
    try {
      const found = await byId(unknown, this.maxIds, (ids) => this.client.accounts.list({ ids }), (account) => account.id);
      for (const [id, account] of found) this.emails.set(id, account.email);
      for (const id of unknown) this.asked.add(id);
      return undefined;
    } catch (error) {
      if (this.lacks(error) === undefined) return `emails not shown: ${describe(error)}`;
      // A key's scopes do not change while it is signed in: no use asking again.
      this.refused = "this key lacks accounts:read: emails not shown";
      return this.refused;
    }
  }

  /** The account's email where known (after `load`), else its id. */
  label(accountId: number): string {
    const email = this.emails.get(accountId);
    if (email === undefined) return `account ${accountId}`;
    return `${email} (account ${accountId}${accountId === this.self.id ? ", you" : ""})`;
  }
}
