// What the console knows of scopes, and whence.
//
// The list of scopes, what each allows and which a role may hold are the document's
// (components.securitySchemes.bearerAuth.x-scopes, and each operation's x-roles and
// x-scopes), read from the document the service serves: the page offers exactly the
// scopes of the service it talks to, and no list here can drift from it.
//
// A call refused for a scope answers 403 insufficient_scope, naming the scope in
// `WWW-Authenticate: Bearer error="insufficient_scope", scope="…"` (RFC 6750). The SDK's
// error carries the answer's request id but not its headers, so the console's fetch
// notes the scope of each such answer by request id, for the message to name it.

import { PetstoreError, type Fetch, type components } from "@acme-pets/petstore";

/** A scope of the document's list; a newer service may name one these types do not know. */
export type Scope = components["schemas"]["Scope"] | (string & {});

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

type Json = Record<string, unknown>;

function object(value: unknown): Json {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Json) : {};
}

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : [];
}

const methods = ["get", "put", "post", "delete", "options", "head", "patch", "trace"];

/** Reads the scopes out of a parsed OpenAPI document (the served /openapi.json). */
export function scopeCatalogue(document: unknown): ScopeCatalogue {
  const doc = object(document);
  const listed = object(object(object(object(doc.components).securitySchemes).bearerAuth)["x-scopes"]);
  const scopes = Object.entries(listed).map(([name, description]) => ({ name, description: typeof description === "string" ? description : "" }));
  if (scopes.length === 0) throw new Error("The service's document lists no scopes.");
  const byRole = new Map<string, Set<string>>();
  for (const item of Object.values(object(doc.paths))) {
    for (const [method, operation] of Object.entries(object(item))) {
      if (!methods.includes(method)) continue;
      const op = object(operation);
      for (const role of strings(op["x-roles"])) {
        let set = byRole.get(role);
        if (set === undefined) byRole.set(role, (set = new Set()));
        for (const scope of strings(op["x-scopes"])) set.add(scope);
      }
    }
  }
  return { scopes, allowed: (role) => new Set(byRole.get(role)) };
}

/** Loads the scopes from the document the service serves. */
export async function loadScopeCatalogue(): Promise<ScopeCatalogue> {
  const response = await fetch(new URL("/openapi.json", location.origin), { headers: { Accept: "application/json" } });
  if (!response.ok) throw new Error(`The service's document could not be read (HTTP ${response.status}), so the scopes cannot be offered.`);
  return scopeCatalogue(await response.json());
}

/**
 * The scope a `WWW-Authenticate` value says was lacking: `Bearer error="insufficient_scope",
 * scope="pets:write"` gives pets:write; anything else, undefined.
 */
export function insufficientScope(header: string | null): string | undefined {
  if (header === null || !/\berror="insufficient_scope"/.test(header)) return undefined;
  return /\bscope="([^"]*)"/.exec(header)?.[1]?.trim() || undefined;
}

/** How many refusals are remembered: the messages are shown as the refusals come. */
const remembered = 50;

/** The scopes the service said were lacking, by request id, for one client. */
export class ScopeRefusals {
  private readonly byRequest = new Map<string, string>();

  /** `fetch`, noting the scope of each 403 insufficient_scope answer. */
  wrap(fetch: Fetch): Fetch {
    return async (request) => {
      const response = await fetch(request);
      if (response.status === 403) {
        const scope = insufficientScope(response.headers.get("WWW-Authenticate"));
        const id = response.headers.get("X-Request-Id");
        if (scope !== undefined && id !== null) {
          this.byRequest.set(id, scope);
          for (const old of this.byRequest.keys()) {
            if (this.byRequest.size <= remembered) break;
            this.byRequest.delete(old);
          }
        }
      }
      return response;
    };
  }

  /**
   * For a call refused for lack of a scope: the scope (or "" when the answer did not name
   * it); for any other error, undefined.
   */
  lacked(error: unknown): string | undefined {
    if (!(error instanceof PetstoreError) || error.code !== "insufficient_scope") return undefined;
    return (error.requestId !== undefined ? this.byRequest.get(error.requestId) : undefined) ?? "";
  }
}
