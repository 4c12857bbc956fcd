// ESLint for the book's page scripts (dynamics_toolchain.scripts.lint_js; tests/toolchain/test_scripts.py).
// The served scripts (*.js: dynamics.js's parts) and the checks' page-side functions
// (evaluate/*.js) run in a browser page, as plain scripts, with plotly.js loaded (Plotly).
// @eslint/js and globals come from ESLint's own install: DYNAMICS_ESLINT names it (the
// linter's runner sets it; .ci/run installs the three side by side), else a node_modules here.
import { createRequire } from "node:module";
import path from "node:path";

const require = createRequire(process.env.DYNAMICS_ESLINT
  ? path.join(process.env.DYNAMICS_ESLINT, "package.json") : import.meta.url);
const js = require("@eslint/js");
const globals = require("globals");

export default [
  js.configs.recommended,
  {
    files: ["**/*.js"],
    languageOptions: {
      ecmaVersion: "latest",
      sourceType: "script",
      globals: { ...globals.browser, Plotly: "readonly" },
    },
    linterOptions: { reportUnusedDisableDirectives: "error" },
    rules: {
      "no-implicit-globals": "error",  // a served script keeps its names inside its function
    },
  },
];
