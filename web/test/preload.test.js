// index.html asks for every module app.js imports (statically, however deep)
// with <link rel="modulepreload">, so that a first visit fetches them at once,
// not one level of imports after another. This keeps that list whole and
// exact: a module added to the graph, or dropped from it, fails here.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { dirname, join, normalize, relative } from "node:path";
import { fileURLToPath } from "node:url";

const staticDir = join(dirname(fileURLToPath(import.meta.url)), "..", "static");

/**
 * The modules a module imports statically (import … from "./x.js",
 * export … from "./x.js", import "./x.js"), as paths under web/static.
 * @param {string} file a path under web/static
 * @returns {string[]}
 */
function importsOf(file) {
  const src = readFileSync(join(staticDir, file), "utf8");
  const found = [];
  for (const m of src.matchAll(/^\s*(?:import|export)\s[^;]*?from\s+"(\.[^"]+)"|^\s*import\s+"(\.[^"]+)"/gm)) {
    found.push(normalize(join(dirname(file), m[1] ?? m[2])));
  }
  return found;
}

test("index.html preloads exactly the modules app.js imports, however deep", () => {
  const graph = new Set();
  const walk = (/** @type {string} */ file) => {
    for (const dep of importsOf(file)) {
      if (!graph.has(dep)) {
        graph.add(dep);
        walk(dep);
      }
    }
  };
  walk("js/app.js");
  graph.delete("js/app.js");
  const html = readFileSync(join(staticDir, "index.html"), "utf8");
  const preloaded = [...html.matchAll(/<link rel="modulepreload" href="\/ui\/([^"]+)">/g)].map((m) => m[1]);
  assert.ok(graph.size > 10, `the walk found ${graph.size} modules: the pattern no longer reads the imports`);
  assert.deepEqual([...preloaded].sort(), [...graph].sort(), `index.html's modulepreload links differ from app.js's imports (${relative(".", staticDir)})`);
});
