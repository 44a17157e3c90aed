// notes.mjs: the x-lint notes of docs/openapi.yaml, which both linters'
// configurations read (.spectral.mjs, scripts/lint-contract/run.mjs).
//
// A rule the document cannot follow truthfully is turned off where the document
// says why, and nowhere else. The reasons are named once, in
// components.x-lint-reasons:
//
//	components:
//	  x-lint-reasons:
//	    public:
//	      rules: [owasp:api2:2023-read-restricted]
//	      why: Anyone may read it; it takes no credential.
//
// and a node names the reasons that hold for it and for everything under it:
// `x-lint: [public]` on an operation. A Redocly rule is named `redocly/NAME`,
// a Spectral rule by its own name. A note's reason is stale, and fails the
// lint, where none of its rules finds anything under the node any more (a
// reason may name rules of which only some apply to a given node: `public`
// turns off read-restricted on a GET and write-restricted on a POST).
import { readFileSync } from "node:fs";
import { pathToPointer } from "@stoplight/json";
import { parse } from "@stoplight/yaml";

export const documentPath = "docs/openapi.yaml";

// pointer is the JSON pointer of a path of keys: ["paths", "/v1/holds"] → "/paths/~1v1~1holds".
export function pointer(keys) {
  return keys.map((k) => "/" + String(k).replaceAll("~", "~0").replaceAll("/", "~1")).join("");
}

// readNotes returns the reasons of the document and its notes: for each node
// with x-lint, its pointer and the rules its reasons name. A note that names
// no reason, or a reason without rules or why, is an error in problems.
export function readNotes(file = documentPath) {
  const doc = parse(readFileSync(file, "utf8"));
  const reasons = doc?.components?.["x-lint-reasons"] ?? {};
  const problems = [];
  for (const [name, r] of Object.entries(reasons)) {
    if (!Array.isArray(r?.rules) || r.rules.length === 0 || typeof r?.why !== "string" || r.why.trim() === "") {
      problems.push(`components.x-lint-reasons.${name} needs rules (a list) and why (a sentence)`);
    }
  }
  const notes = [];
  const walk = (node, keys) => {
    if (node === null || typeof node !== "object") return;
    if (!Array.isArray(node) && "x-lint" in node) {
      const names = [node["x-lint"]].flat();
      const rules = [];
      for (const name of names) {
        if (!reasons[name]) {
          problems.push(`x-lint at #${pointer(keys)} names ${JSON.stringify(name)}, which components.x-lint-reasons does not define`);
          continue;
        }
        for (const rule of reasons[name].rules ?? []) rules.push({ rule, reason: name });
      }
      notes.push({ pointer: pointer(keys), keys, rules });
    }
    for (const [k, v] of Object.entries(node)) {
      if (k !== "x-lint") walk(v, [...keys, k]);
    }
  };
  walk(doc, []);
  return { reasons, notes, problems };
}

// spectralOverrides turns each note's Spectral rules off at its node, in the
// form of a Spectral ruleset's overrides.
export function spectralOverrides(notes, file = documentPath) {
  const out = [];
  for (const n of notes) {
    const rules = Object.fromEntries(n.rules.filter((r) => !r.rule.startsWith("redocly/")).map((r) => [r.rule, "off"]));
    // As Spectral writes a result's pointer: a URI fragment ({id} is %7Bid%7D).
    if (Object.keys(rules).length) out.push({ files: [file + pathToPointer(n.keys)], rules });
  }
  return out;
}

// redoclyIgnores are the notes' Redocly rules as an ignore file lists them:
// rule → the pointers where it is off.
export function redoclyIgnores(notes) {
  const out = {};
  for (const n of notes) {
    for (const { rule } of n.rules) {
      if (rule.startsWith("redocly/")) (out[rule.slice("redocly/".length)] ??= []).push("#" + n.pointer);
    }
  }
  return out;
}
