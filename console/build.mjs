// Bundles the pages' scripts: the console (src/main.ts) and the shop (../shop/src/main.ts),
// each with the TypeScript SDK's sources and openapi-fetch, into the one script its Go
// package embeds. The shop imports the console's helpers it shares (dom.ts, money.ts…),
// so one toolchain, pinned by this package-lock.json, builds both. The output depends
// only on the sources and those versions, so CI rebuilds it and fails when a committed
// file differs (scripts/check-generated).
import { build } from "esbuild";

const pages = [
  { entry: "src/main.ts", outfile: "../internal/console/assets/console.js", from: "console/src" },
  { entry: "../shop/src/main.ts", outfile: "../internal/shop/assets/shop.js", from: "shop/src" },
];

for (const page of pages) {
  await build({
    entryPoints: [page.entry],
    outfile: page.outfile,
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
    banner: { js: `// Built from ${page.from} by \`npm run build\` in console/; do not edit.` },
    logLevel: "warning",
  });
}
