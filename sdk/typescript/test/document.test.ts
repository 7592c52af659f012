// The SDK's open lists (knownValues) are the document's `x-extensible-enum`s, so that a value
// added to the document is not forgotten here.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { parse } from "yaml";
import { knownValues, type components, type KnownScope } from "@acme-pets/petstore";

/** A YAML scalar without its quotes ('*' must be quoted in YAML). */
function unquote(v: string): string {
  return /^(['"]).*\1$/.test(v) ? v.slice(1, -1) : v;
}

/** Every `x-extensible-enum` under components.schemas, as "Schema" or "Schema.property". */
function extensibleEnums(yaml: string): Record<string, string[]> {
  const found: Record<string, string[]> = {};
  const lines = yaml.split("\n");
  let schema = "";
  let property = "";
  lines.forEach((line, i) => {
    const key = /^( *)([\w-]+):/.exec(line);
    if (key?.[1]?.length === 4) [schema, property] = [key[2] ?? "", ""];
    if (key?.[1]?.length === 8) property = key[2] ?? "";
    const list = /^( *)x-extensible-enum:\s*(.*)$/.exec(line);
    if (!list) return;
    const indent = list[1]?.length ?? 0;
    let values: string[];
    if (list[2]?.startsWith("[")) {
      values = list[2].replace(/[[\]]/g, "").split(",").map((v) => unquote(v.trim()));
    } else {
      values = [];
      for (let j = i + 1; /^ *- /.test(lines[j] ?? "") && (lines[j]?.search(/\S/) ?? 0) >= indent; j++) {
        values.push(unquote((lines[j] ?? "").replace(/^ *- /, "").trim()));
      }
    }
    found[indent === 6 ? schema : `${schema}.${property}`] = values;
  });
  return found;
}

test("knownValues match the document's x-extensible-enum lists", () => {
  const yaml = readFileSync(new URL("../../../api/openapi.yaml", import.meta.url), "utf8");
  assert.deepEqual(extensibleEnums(yaml), {
    "Error.code": knownValues.errorCode,
    "Pet.status": knownValues.petStatus,
    "Photo.contentType": knownValues.photoContentType,
    "InventoryItem.status": knownValues.petStatus,
    "Order.status": knownValues.orderStatus,
    Role: knownValues.role,
    "ApiKey.scopes": knownValues.scope,
    "CreatedApiKey.scopes": knownValues.scope,
    "ApiKeyChange.scopes": knownValues.scope,
    "CallingKey.scopes": knownValues.scope,
    "Message.status": knownValues.messageStatus,
    "Webhook.events": knownValues.webhookEvents,
    "Delivery.status": knownValues.deliveryStatus,
    EventType: knownValues.eventType,
    "Actor.type": knownValues.actorType,
    "Account.passwordSource": knownValues.passwordSource,
  });
});

/** true when A and B are the same union: the build fails otherwise. */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const scopeTypesAgree: Same<KnownScope, components["schemas"]["Scope"]> = true;

test("knownValues.scope is every scope of the document: the Scope enum and the bearerAuth x-scopes", () => {
  assert.ok(scopeTypesAgree);
  const document = parse(readFileSync(new URL("../../../api/openapi.yaml", import.meta.url), "utf8")) as {
    components: {
      schemas: { Scope: { enum: string[] } };
      securitySchemes: { bearerAuth: { "x-scopes": Record<string, string> } };
    };
  };
  const sorted = (values: readonly string[]) => [...values].sort();
  assert.deepEqual(sorted(knownValues.scope), sorted(document.components.schemas.Scope.enum), "the Scope enum");
  assert.deepEqual(
    sorted(knownValues.scope),
    sorted(Object.keys(document.components.securitySchemes.bearerAuth["x-scopes"])),
    "the bearerAuth scheme's x-scopes",
  );
});
