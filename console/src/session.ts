// Where a page keeps a session's key (`POST /sessions`: email and password, 12 hours):
// in memory and in this tab's sessionStorage only, so that a reload of the tab stays
// signed in while a new tab asks again. Signing out revokes the key (`DELETE
// /api-keys/{keyId}`, which a key may do to itself) and clears the storage. The console
// and the shop each keep theirs under a storage key of their own.

import type { Session } from "@acme-pets/petstore";

/** A session's key, as the tab keeps it: the secret, and its id to revoke it with. */
export interface SessionKey {
  id: number;
  key: string;
  expiresAt?: string;
}

/** The session's key of a `POST /sessions` answer, as a tab keeps it. */
export function sessionKey(session: Session): SessionKey {
  return { id: session.key.id, key: session.key.key, ...(session.key.expiresAt ? { expiresAt: session.key.expiresAt } : {}) };
}

/** Keeps a page's session key in this tab's sessionStorage under `storageKey`. */
export function sessionKeeper(storageKey: string) {
  return {
    /** The session kept in this tab, if any. */
    kept(): SessionKey | undefined {
      try {
        const kept: unknown = JSON.parse(sessionStorage.getItem(storageKey) ?? "null");
        if (typeof kept !== "object" || kept === null) return undefined;
        const { id, key, expiresAt } = kept as Record<string, unknown>;
        if (typeof id !== "number" || typeof key !== "string") return undefined;
        return { id, key, ...(typeof expiresAt === "string" ? { expiresAt } : {}) };
      } catch {
        return undefined;
      }
    },
    /** Keeps a session's key in this tab (gone when the tab closes). */
    keep(session: SessionKey): void {
      sessionStorage.setItem(storageKey, JSON.stringify(session));
    },
    /** Forgets the tab's session key. */
    forget(): void {
      sessionStorage.removeItem(storageKey);
    },
  };
}
