// What the console knows of the store's rules and of the fields' limits, and whence.
//
// The statuses a pet may be given, the changes of status staff may make by hand (rule 7:
// PetStatus's x-transitions), the statuses of an order, and the bounds of each field a
// form edits or a filter sends (maxLength, minimum, maximum, maxItems) are the
// document's, read from the document the service serves (/openapi.json), as the scopes
// are (scopes.ts): the page offers what the service it talks to accepts, and no table
// here can drift from it. The service still decides; the page only spares a round trip.

import type { ListOrdersQuery, NewPet } from "@acme-pets/petstore";

import { type Json, object, operations, strings } from "./document.js";

/** The statuses a request may set (a pet may show one added later: an open list). */
export type Status = NonNullable<NewPet["status"]>;

/** The statuses an order may be listed by. */
export type OrderStatus = NonNullable<ListOrdersQuery["status"]>;

/** The bounds of a field or a parameter, as its schema states them. */
export interface Limits {
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  maxItems?: number;
}

function limitsOf(schema: Json): Limits {
  const out: Limits = {};
  for (const key of ["minLength", "maxLength", "minimum", "maximum", "maxItems"] as const) {
    const value = schema[key];
    if (typeof value === "number") out[key] = value;
  }
  return out;
}

/** The rules and limits of the service's document. */
export class Rules {
  /** The statuses a pet may be given (PetStatus), in the document's order. */
  readonly petStatuses: readonly Status[];
  /** The statuses of an order (OrderStatus), in the document's order. */
  readonly orderStatuses: readonly OrderStatus[];
  private readonly moves: ReadonlyMap<string, readonly Status[]>;
  private readonly schemas: Json;
  private readonly parameters = new Map<string, Json>(); // "operationId name" → schema

  /** Reads a parsed OpenAPI document (the served /openapi.json); throws when it lacks the rules. */
  constructor(document: unknown) {
    const doc = object(document);
    const components = object(doc.components);
    this.schemas = object(components.schemas);
    const petStatus = this.schema("PetStatus");
    this.petStatuses = strings(petStatus.enum) as Status[];
    this.orderStatuses = strings(this.schema("OrderStatus").enum) as OrderStatus[];
    const table = object(petStatus["x-transitions"]);
    this.moves = new Map(Object.entries(table).map(([from, to]) => [from, strings(to) as Status[]]));
    if (this.petStatuses.length === 0 || this.moves.size === 0) throw new Error("The service's document lists no pet statuses or no changes of status.");

    const shared = object(components.parameters);
    for (const op of operations(doc)) {
      for (const p of Array.isArray(op.parameters) ? op.parameters : []) {
        const ref = object(p).$ref;
        const param = typeof ref === "string" ? object(shared[ref.replace("#/components/parameters/", "")]) : object(p);
        this.parameters.set(`${String(op.operationId)} ${String(param.name)}`, this.resolve(object(param.schema)));
      }
    }
  }

  /**
   * The statuses a pet that is `from` may be given by hand (rule 7); none for a status
   * the document does not know (one added later).
   */
  transitions(from: string): readonly Status[] {
    return this.moves.get(from) ?? [];
  }

  /** The bounds of a property of one of the document's schemas (`NewPet`, `name`). */
  field(schema: string, property: string): Limits {
    return limitsOf(this.resolve(this.property(schema, property)));
  }

  /** The bounds of each item of a list property of a schema (`NewPet`, `tags`: each tag's). */
  items(schema: string, property: string): Limits {
    return limitsOf(this.resolve(object(this.resolve(this.property(schema, property)).items)));
  }

  /** The bounds of an operation's parameter (`listPets`, `name`). */
  parameter(operationId: string, name: string): Limits {
    const schema = this.parameters.get(`${operationId} ${name}`);
    if (schema === undefined) throw new Error(`The service's document has no parameter ${name} of ${operationId}.`);
    return limitsOf(schema);
  }

  /**
   * The event types a request may name (`FeedEventType`), in the document's order, each
   * with the scope a key needs to read its events (`EventType`'s `x-read-scopes`).
   */
  eventTypes(): { type: string; scope: string | undefined }[] {
    const scopes = object(this.schema("EventType")["x-read-scopes"]);
    return strings(this.schema("FeedEventType").enum).map((type) => ({ type, scope: typeof scopes[type] === "string" ? scopes[type] : undefined }));
  }

  private property(schema: string, property: string): Json {
    const prop = object(object(this.schema(schema).properties)[property]);
    if (Object.keys(prop).length === 0) throw new Error(`The service's document has no ${schema}.${property}.`);
    return prop;
  }

  private schema(name: string): Json {
    const schema = object(this.schemas[name]);
    if (Object.keys(schema).length === 0) throw new Error(`The service's document has no schema ${name}.`);
    return schema;
  }

  /** A schema with its `$ref` to one of the document's schemas followed (one step). */
  private resolve(schema: Json): Json {
    const ref = typeof schema.$ref === "string" ? schema.$ref : undefined;
    if (ref?.startsWith("#/components/schemas/")) return this.schema(ref.slice("#/components/schemas/".length));
    return schema;
  }
}

/** The attributes of a text input that hold it to a field's bounds. */
export function textBounds(limits: Limits): { minlength?: number; maxlength?: number } {
  return { minlength: limits.minLength, maxlength: limits.maxLength };
}

/** The attributes of a number input that hold it to a field's bounds. */
export function numberBounds(limits: Limits): { min?: number; max?: number } {
  return { min: limits.minimum, max: limits.maximum };
}

/** Reads the document the service serves. */
export async function loadDocument(): Promise<unknown> {
  const response = await fetch(new URL("/openapi.json", location.origin), { headers: { Accept: "application/json" } });
  if (!response.ok) throw new Error(`The service's document could not be read (HTTP ${response.status}): the console takes the store's rules, the fields' limits and the scopes from it.`);
  return response.json();
}
