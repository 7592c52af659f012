// What the shop's screens share once a customer is signed in.

import type { CurrentAccount, Petstore } from "@acme-pets/petstore";

/** The signed-in shop, as each screen sees it. */
export interface Shop {
  client: Petstore;
  /** The signed-in account (its id and role: "My orders" lists its own). */
  account: CurrentAccount;
  /** Says that something worked, in the page's status line; `extra` follows the text (a link). */
  done(message: string, ...extra: Node[]): void;
  /** Shows what went wrong in the page's alert line, or signs out when the key is refused. */
  fail(error: unknown): void;
  /** Clears the status and alert lines (a new action starts). */
  clear(): void;
}

/** The scopes a shop's session key is limited to: what a customer does here, nothing more. */
export const sessionScopes = ["account:read", "pets:read", "orders:read", "orders:write"] as const;
