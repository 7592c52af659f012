// Reading the served OpenAPI document (/openapi.json), which the console takes its
// scopes (scopes.ts) and the store's rules (rules.ts) from: it arrives as untyped JSON,
// so every member is read through these, which yield nothing rather than throw on a
// shape the page does not expect.

export type Json = Record<string, unknown>;

/** value as an object, or an empty one when it is not one. */
export function object(value: unknown): Json {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Json) : {};
}

/** The strings of value, when it is a list; none otherwise. */
export function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : [];
}

const methods = ["get", "put", "post", "delete", "options", "head", "patch", "trace"];

/** Every operation of the document (the members of its paths that are methods). */
export function* operations(document: unknown): Generator<Json> {
  for (const item of Object.values(object(object(document).paths))) {
    for (const [method, operation] of Object.entries(object(item))) {
      if (methods.includes(method)) yield object(operation);
    }
  }
}
