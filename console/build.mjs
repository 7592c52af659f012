// Bundles the console (src/main.ts, the TypeScript SDK's sources and openapi-fetch) into
// the one script the binary embeds. The output depends only on the sources and the
// versions in package-lock.json, so CI rebuilds it and fails when the committed file
// differs (scripts/check-generated).
import { build } from "esbuild";

await build({
  entryPoints: ["src/main.ts"],
  outfile: "../internal/console/assets/console.js",
  bundle: true,
  format: "esm",
  target: "es2022",
  minify: true,
  legalComments: "eof",
  charset: "utf8",
  tsconfig: "tsconfig.json",
  // The SDK's sources import openapi-fetch; resolve it here, from this lock file, not
  // from whatever sdk/typescript/node_modules holds.
  alias: { "openapi-fetch": "openapi-fetch" },
  banner: { js: "// Built from console/src by `npm run build` in console/; do not edit." },
  logLevel: "warning",
});
