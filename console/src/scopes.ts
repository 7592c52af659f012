// What the console knows of scopes, and whence.
//
// The list of scopes, what each allows and which a role may hold are the document's
// (components.securitySchemes.bearerAuth.x-scopes, and each operation's x-roles and
// x-scopes), read from the document the service serves (read at sign-in, with the
// store's rules: rules.ts): the page offers exactly the scopes of the service it talks
// to, and no list here can drift from it.
//
// A call refused for a scope answers 403 insufficient_scope, naming the scope in
// `WWW-Authenticate: Bearer error="insufficient_scope", scope="…"` (RFC 6750), which the
// SDK's error carries as `scope`.

import { PetstoreError, type Scope } from "@acme-pets/petstore";

import { object, operations, strings } from "./document.js";

export interface ScopeInfo {
  name: Scope;
  /** What the scope allows, as the document says it. */
  description: string;
}

/** The document's scopes, in its order, and which of them each role allows. */
export interface ScopeCatalogue {
  scopes: ScopeInfo[];
  /**
   * The scopes a role allows, as the service decides it: those of the operations whose
   * `x-roles` name the role.
   */
  allowed(role: string): Set<string>;
}

/** Reads the scopes out of a parsed OpenAPI document (the served /openapi.json). */
export function scopeCatalogue(document: unknown): ScopeCatalogue {
  const doc = object(document);
  const listed = object(object(object(object(doc.components).securitySchemes).bearerAuth)["x-scopes"]);
  const scopes = Object.entries(listed).map(([name, description]) => ({ name, description: typeof description === "string" ? description : "" }));
  if (scopes.length === 0) throw new Error("The service's document lists no scopes.");
  const byRole = new Map<string, Set<string>>();
  for (const op of operations(doc)) {
    for (const role of strings(op["x-roles"])) {
      let set = byRole.get(role);
      if (set === undefined) byRole.set(role, (set = new Set()));
      for (const scope of strings(op["x-scopes"])) set.add(scope);
    }
  }
  return { scopes, allowed: (role) => new Set(byRole.get(role)) };
}

/**
 * For a call refused for lack of a scope: the scope (or "" when the answer did not name
 * it); for any other error, undefined.
 */
export function lackedScope(error: unknown): string | undefined {
  if (!(error instanceof PetstoreError) || error.code !== "insufficient_scope") return undefined;
  return error.scope ?? "";
}

/**
 * What a key may do: for an operation of the document (by its operationId), whether the
 * key holds every scope the operation's `x-scopes` names. `granted` is the key's scopes as
 * `GET /accounts/me` tells them (`key.scopes`: what it may use now); a service that does
 * not tell them leaves every operation offered, and its refusals say which scope lacked.
 * An operation the document does not have is not offered.
 */
export function permissions(document: unknown, granted: readonly string[] | undefined): (operationId: string) => boolean {
  if (granted === undefined) return () => true;
  const held = new Set(granted);
  const may = new Map<string, boolean>();
  for (const op of operations(document)) {
    if (typeof op.operationId === "string") may.set(op.operationId, strings(op["x-scopes"]).every((s) => held.has(s)));
  }
  return (operationId) => may.get(operationId) ?? false;
}
