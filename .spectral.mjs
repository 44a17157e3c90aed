// Spectral's ruleset for docs/openapi.yaml: spectral:oas and the OWASP API
// Security ruleset (@stoplight/spectral-owasp-ruleset), every rule as its
// authors set it, but where the document's x-lint notes turn one off at a node
// and say why (scripts/lint-contract/notes.mjs). scripts/lint-contract.sh runs it.
import { oas } from "@stoplight/spectral-rulesets";
import owasp from "@stoplight/spectral-owasp-ruleset";
import { readNotes, spectralOverrides } from "./scripts/lint-contract/notes.mjs";

const { notes } = readNotes();

// LINT_CONTRACT_RAW=1: no note applies (what the rules say of the document
// as it is; scripts/lint-contract.sh compares the two to find stale notes).
const overrides = process.env.LINT_CONTRACT_RAW ? [] : spectralOverrides(notes);

export default {
  extends: [oas, owasp],
  ...(overrides.length ? { overrides } : {}),
};
